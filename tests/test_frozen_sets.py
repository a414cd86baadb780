"""Every frozen data set still matches the SHA-256 written when it was frozen: a held-out set
or the training bank edited after its freeze would make every figure measured on it a
figure about another set."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
HASH_FILES = sorted([*SAMPLES.glob("public/*.sha256"), *SAMPLES.glob("**/FROZEN.sha256")])


def frozen_entries() -> list[tuple[Path, str]]:
    entries = []
    for hash_file in HASH_FILES:
        for line in hash_file.read_text(encoding="utf-8").splitlines():
            digest, name = line.split(maxsplit=1)
            entries.append((hash_file.parent / name.lstrip("*"), digest))
    return entries


def test_the_frozen_sets_are_the_ones_we_know() -> None:
    names = {path.relative_to(SAMPLES).as_posix() for path, _ in frozen_entries()}
    assert {"bank/decisions_bank.jsonl", "public/decisions_fresh2.jsonl",
            "public/decisions_fresh3.jsonl", "public/decisions_fresh4.jsonl",
            "public/decisions_fresh5.jsonl", "public/decisions_fresh6.jsonl",
            "public/decisions_fresh7.jsonl",
            "public/handbooks/answers_heldout.jsonl",
            "public/handbooks/answers_heldout2_18f.jsonl",
            "public/handbooks/answers_heldout2_govuk.jsonl",
            "public/handbooks/answers_heldout3_18f.jsonl",
            "public/handbooks/answers_heldout3_govuk.jsonl",
            "public/handbooks/answers_heldout4_18f.jsonl",
            "public/handbooks/answers_heldout4_govuk.jsonl",
            "public/handbooks/answers_heldout5_18f.jsonl",
            "public/handbooks/answers_heldout5_govuk.jsonl",
            "public/handbooks/answers_heldout6_18f.jsonl",
            "public/handbooks/answers_heldout6_govuk.jsonl",
            "public/handbooks/answers_heldout7_civic.jsonl",
            "public/handbooks/answers_heldout7_modplat.jsonl",
            "public/handbooks/answers_heldout8_hmcts.jsonl",
            "public/handbooks/answers_heldout8_truss.jsonl",
            "public/handbooks/answers_heldout9_ffc.jsonl",
            "public/handbooks/answers_heldout9_sds.jsonl",
            "public/handbooks/answers_heldout10_dfe.jsonl",
            "public/handbooks/answers_heldout10_opg.jsonl",
            "public/handbooks/answers_heldout11_das.jsonl",
            "public/handbooks/answers_heldout11_paas.jsonl",
            "public/handbooks/answers_heldout12_opseng.jsonl",
            "public/handbooks/answers_heldout12_tdr.jsonl",
            "public/handbooks/answers_heldout13_hackney.jsonl",
            "public/handbooks/answers_heldout13_iceland.jsonl",
            "public/handbooks/answers_heldout14_artsy.jsonl",
            "public/handbooks/answers_heldout14_artsyb.jsonl",
            "public/handbooks/answers_heldout14_rapcop.jsonl",
            "public/handbooks/answers_heldout15_govwifi.jsonl",
            "public/handbooks/answers_heldout15_ons.jsonl",
            "public/handbooks/answers_heldout16_dhcw.jsonl",
            "public/handbooks/answers_heldout16_reg.jsonl",
            "public/handbooks/answers_heldout17_futured.jsonl",
            "public/handbooks/answers_heldout18_dwpam.jsonl",
            "public/handbooks/answers_heldout18_paas.jsonl",
            "public/handbooks/answers_heldout19_cwep.jsonl",
            "public/handbooks/answers_heldout19_nais.jsonl",
            "public/handbooks/answers_heldout20_bcgov.jsonl",
            "public/handbooks/answers_heldout20_govukds.jsonl",
            "public/handbooks/answers_heldout21_dfeur.jsonl",
            "public/handbooks/answers_heldout21_forge.jsonl",
            "public/handbooks/answers_heldout22_otel.jsonl",
            "public/handbooks/answers_heldout22_carpentries.jsonl",
            "public/handbooks/answers_heldout23_chaoss.jsonl",
            "public/handbooks/answers_heldout23_tcs.jsonl",
            "public/handbooks/answers_heldout24_knative.jsonl",
            "public/handbooks/answers_heldout24_mojcpr.jsonl",
            "public/handbooks/answers_heldout25_pcn.jsonl",
            "public/handbooks/answers_heldout25_cgov.jsonl",
            "public/handbooks/answers_heldout26_ghwa.jsonl",
            "public/handbooks/answers_heldout26_wpcli.jsonl",
            "public/handbooks/answers_heldout27_gaws.jsonl",
            "public/handbooks/answers_heldout28_ossf.jsonl",
            "public/handbooks/answers_heldout29_azsdk.jsonl",
            "public/handbooks/answers_heldout30_tagsec.jsonl",
            "public/handbooks/answers_heldout31_brew.jsonl",
            "public/handbooks/answers_heldout32_gwt.jsonl",
            "public/handbooks/answers_heldout33_tob.jsonl",
            "public/handbooks/answers_heldout34_asfc.jsonl",
            "public/handbooks/answers_heldout35_etcd.jsonl",
            "public/handbooks/answers_heldout36_kops.jsonl",
            "public/handbooks/answers_heldout37_prom.jsonl",
            "public/handbooks/answers_heldout38_syn.jsonl",
            "public/handbooks/answers_heldout39_thn.jsonl",
            "public/handbooks/answers_heldout40_odf.jsonl",
            "public/handbooks/answers_heldout41_i2c.jsonl",
            "public/handbooks/answers_heldout42_rook.jsonl",
            "public/handbooks/answers_heldout43_tkn.jsonl",
            "public/handbooks/answers_heldout44_flux.jsonl"} <= names


@pytest.mark.parametrize(("path", "digest"), frozen_entries(),
                         ids=lambda value: value.name if isinstance(value, Path) else "")
def test_a_frozen_set_matches_its_hash(path: Path, digest: str) -> None:
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, (
        f"{path} changed after it was frozen")
