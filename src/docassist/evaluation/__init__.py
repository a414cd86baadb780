"""Offline evaluation: what the CLI's `eval` commands, the report and bench/ measure.

Not on a user's path: the core and the adapters never import this package.

    decisions   labelled decision cases through planning; the shadow selector's agreement
    answers     end-to-end answers from labelled cases; draft cases harvested from traces
    retrieval   ranking quality of retrievers (recall@k, MRR)
    baseline    plain `bm25s` over the same chunks, reported beside every retrieval figure
"""
