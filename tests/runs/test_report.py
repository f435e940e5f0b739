"""The report writer: report.md with linked plots, report.html self-contained, rendered by headless Chromium."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from lexprobe.core.errors import LexprobeError
from lexprobe.core.findings import Criterion, Evidence, Finding
from lexprobe.runs.report import Image, Report, Section, Table, write_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
RED = (1.0, 0.0, 0.0)  # the fixture plot's colour: nothing else on the page is pure red


class _Refs(HTMLParser):
    def __init__(self):
        super().__init__()
        self.imgs, self.links, self.ids = [], [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.append(attrs["id"])
        if tag == "img":
            self.imgs.append(attrs.get("src", ""))
        for key in ("href", "src"):
            if tag != "img" and attrs.get(key):
                self.links.append(attrs[key])


def _fixture_report(run: Path) -> Report:
    import matplotlib.pyplot as plt

    (run / "stage").mkdir(parents=True)
    plt.imsave(run / "stage" / "red.png", np.broadcast_to(np.array(RED), (120, 480, 3)).copy())
    finding = Finding("analogies", "the paper found X", Criterion("X above 0.3", lambda ev: ev[0].low > 0.3),
                      (Evidence("this run found X", 0.5, 0.4, 0.6, 10),), section="demo")
    section = Section("demo", "A demo stage", "analogies", note="fixture", text=["Index `glove` **reused**."],
                      findings=[finding],
                      tables=[Table("Accuracy <per> relation", [{"relation": "I01 <script>", "accuracy": 0.5},
                                                                {"relation": "I02", "accuracy": 0.25}])],
                      images=[Image("stage/red.png", "a red block")], settings={"seed": 3}, seconds=1.5)
    skipped = Section("later", "A later stage", "senses", status="skipped", note="not available yet")
    return Report("demo report", [section, skipped], settings={"seed": 3, "models": {"glove": "1.0"}}, seconds=2.0)


def test_markdown_and_html_from_a_fixture_section(tmp_path):
    paths = write_report(_fixture_report(tmp_path), tmp_path)
    md = paths["md"].read_text()
    assert "| relation | accuracy |" in md and "| I02 | 0.2500 |" in md
    assert "> **Paper:** the paper found X" in md
    assert "> **This run:** this run found X 0.500 [0.400, 0.600] (n = 10)  \n> **Verdict:** **agrees**" in md
    assert "![a red block](stage/red.png)" in md and (tmp_path / "stage" / "red.png").exists()
    assert "skipped: not available yet" in md
    details = md[md.index("## Settings"):]  # after the opening findings table
    assert details.index("A demo stage") < details.index("BERT has uncommon sense") < details.index("A later stage")

    page = paths["html"].read_text()
    refs = _Refs()
    refs.feed(page)
    assert len(refs.imgs) == 1 and refs.imgs[0].startswith("data:image/png;base64,")
    assert base64.b64decode(refs.imgs[0].split(",", 1)[1]) == (tmp_path / "stage" / "red.png").read_bytes()
    assert refs.links and all(link[1:] in refs.ids for link in refs.links)  # nothing outside the file
    assert "<script>" not in page and "I01 &lt;script&gt;" in page
    assert "<code>glove</code>" in page and "<strong>reused</strong>" in page

    numbers = json.loads(paths["json"].read_text())
    assert numbers["sections"][0]["tables"][0]["rows"][1] == {"relation": "I02", "accuracy": 0.25}
    assert "seconds" not in numbers["sections"][0]


def test_missing_image_fails_before_replacing_the_old_report(tmp_path):
    report = _fixture_report(tmp_path)
    write_report(report, tmp_path)
    before = (tmp_path / "report.md").read_bytes()
    report.sections[0].images.append(Image("stage/gone.png"))
    report.sections[0].tables[0].rows.append({"relation": "I03", "accuracy": 1.0})
    with pytest.raises(LexprobeError, match="gone.png: image referenced by the report is missing"):
        write_report(report, tmp_path)
    assert (tmp_path / "report.md").read_bytes() == before


def test_html_renders_in_headless_chromium_with_its_images(tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.skip("Chromium is not installed here (apt-get install chromium): the report's rendering is unchecked")
    import matplotlib.image as mpimg

    run = tmp_path / "run"
    html_path = write_report(_fixture_report(run), run)["html"]
    moved = tmp_path / "alone" / "report.html"  # the page alone, away from the PNG files: images must be embedded
    moved.parent.mkdir()
    shutil.copy(html_path, moved)
    shot = tmp_path / "shot.png"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1000,1200", f"--screenshot={shot}",
           moved.as_uri()]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert shot.exists(), result.stderr[-2000:]
    pixels = mpimg.imread(shot)[..., :3]
    assert (pixels < 0.9).any(axis=2).mean() > 0.02  # not blank: text and tables drawn
    red = (pixels[..., 0] > 0.9) & (pixels[..., 1] < 0.1) & (pixels[..., 2] < 0.1)
    assert red.sum() > 0.5 * 120 * 480  # the embedded plot is drawn (it may be scaled to the page width)
