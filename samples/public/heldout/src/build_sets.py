#!/usr/bin/env python3
"""Write the JSONL question sets; splits drawn with random.Random(13), stratified per file+language."""
import json, os, random, sys, importlib.util
here = os.path.dirname(os.path.abspath(__file__)); out = os.path.dirname(here)
corp = sys.argv[1] if len(sys.argv) > 1 else os.path.join(out, 'corpora')
def load(n):
    spec = importlib.util.spec_from_file_location(n, os.path.join(here, n + '.py'))
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); return m.Q
sets = [('man-l10n', 'mlx', load('q_l10n')), ('man-crossling', 'mxl', load('q_x')), ('python-docs', 'pyd', load('q_py'))]
errs = 0
for name, pre, Q in sets:
    rows = []; ids = set()
    bylang = {}
    for lang, q, paths in Q:
        bylang.setdefault(lang, []).append((q, paths))
    for lang in sorted(bylang):
        items = bylang[lang]
        n = len(items); k = round(n * 0.4)
        idx = list(range(n)); random.Random(13).shuffle(idx)
        tune = set(idx[:k])
        for i, (q, paths) in enumerate(items):
            rid = f"{pre}-{lang}-{i+1:03d}"
            assert rid not in ids; ids.add(rid)
            assert len(paths) == len(set(paths)), rid
            for pth in paths:
                if not os.path.isfile(os.path.join(corp, name, pth)):
                    print('MISSING', name, rid, pth); errs += 1
            if name.startswith('man') and lang in ('en','pl','ru'):
                if any(x.startswith(lang + '/') for x in paths) and not paths[0].startswith(lang + '/'):
                    print('ORDER', rid)
            rows.append({"id": rid, "set": name, "language": lang, "question": q,
                         "expected_paths": paths, "split": "tune" if i in tune else "test"})
    with open(os.path.join(out, name + '.jsonl'), 'w', encoding='utf-8') as f:
        for r in rows: f.write(json.dumps(r, ensure_ascii=False) + '\n')
    from collections import Counter
    print(name, Counter((r['language'], r['split']) for r in rows))
sys.exit(1 if errs else 0)
