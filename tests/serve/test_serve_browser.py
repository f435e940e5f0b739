"""The page of ``lexprobe serve`` in a real browser: Debian's chromium, headless, driven by selenium through the
system's chromedriver (nothing downloaded). The tests start the server themselves on a free loopback port. A
missing browser fails the test: the page is a feature, not an option.

The projection tests type or upload the lists, read the labels and fills from the SVG, and compare every export
(CSV, JSON, SVG, PNG, downloaded as a user would) with the API's own JSON of the same request. Each view's figure
is saved as a PNG in a temporary folder (``benchmarks/serve/`` holds copies, see ``benchmarks/serve.md``)."""

from __future__ import annotations

import csv
import json
import shutil
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from lexprobe.serve.app import Running
from serve_fixtures import INSERTED_WORDS, MONEY, RIVER, serve_home, small_home

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1400,1100"]
WORDS = ["king", "queen", "man", "woman", "paris", "france", "berlin", "germany", "frog", "toad"]
UNKNOWN = "qxqxzzq"


@pytest.fixture(scope="module")
def served(tmp_path_factory, glove_home, shared_data):
    """A server over the serve tests' ``glove`` (400k) and ``bank``, and ``small``: the small home's GloVe (20,000
    words and the INSERTED_WORDS of ``ota --into``/``am --into`` origin), all linked."""
    shared = serve_home(tmp_path_factory.mktemp("serve"), glove_home)
    small = small_home(tmp_path_factory.mktemp("serve_small"))
    home = tmp_path_factory.mktemp("browser") / "indexes"
    home.mkdir()
    for name, target in (("glove", shared / "glove"), ("bank", shared / "bank"), ("small", small / "glove")):
        (home / name).symlink_to(target.resolve(), target_is_directory=True)
    with Running(home, data_places=[shared_data]) as url:
        yield url


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    import os

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]
    if missing:
        pytest.fail(f"{', '.join(missing)} missing: install Debian's chromium and chromium-driver "
                    "(tools/test.sh does it as root) to test the serve page")
    downloads = tmp_path_factory.mktemp("downloads")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS + [f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"]:
        options.add_argument(flag)
    options.add_experimental_option("prefs", {"download.default_directory": str(downloads),
                                              "download.prompt_for_download": False})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)})
    driver.set_page_load_timeout(60)
    driver.downloads = downloads
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    """Where the screenshots of the views go (copied into benchmarks/serve/ by hand, see benchmarks/serve.md)."""
    return tmp_path_factory.mktemp("screenshots")


def wait_for(driver, condition, what: str, timeout: float = 60):
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        return WebDriverWait(driver, timeout).until(lambda d: condition(d))
    except TimeoutException:
        errors = [e.text for e in driver.find_elements("css selector", ".error") if e.text]
        pytest.fail(f"timed out waiting for {what}; errors on the page: {errors}")


def ready(driver) -> None:
    wait_for(driver, lambda d: d.find_element("tag name", "body").get_attribute("data-ready") == "1", "the page")


def submit(driver, form: str, **fields) -> None:
    for name, value in fields.items():
        box = driver.find_element("id", name)
        box.clear()
        box.send_keys(value)
    driver.find_element("css selector", f"#{form}-form button[type=submit]").click()


def cells(driver, table: str, css: str) -> list[str]:
    return [c.text for c in driver.find_elements("css selector", f"#{table}-out {css}")]


def texts(driver, css: str) -> list[str]:
    return [e.get_attribute("textContent") for e in driver.find_elements("css selector", css)]


def choose(driver, select: str, value: str) -> None:
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element("id", select)).select_by_value(value)


def api(base: str, endpoint: str, params: dict) -> dict:
    with urllib.request.urlopen(f"{base}/api/{endpoint}?" + urllib.parse.urlencode(params), timeout=120) as r:
        return json.load(r)


def api_error(base: str, endpoint: str, params: dict) -> str:
    """The ``error`` of a request the API refuses (4xx)."""
    try:
        urllib.request.urlopen(f"{base}/api/{endpoint}?" + urllib.parse.urlencode(params), timeout=120)
    except urllib.error.HTTPError as exc:
        assert 400 <= exc.code < 500
        return json.load(exc)["error"]
    pytest.fail(f"/api/{endpoint} accepted {params}")


def project(driver, view: str, method: str = "pca", **fields) -> None:
    """Fill the projection form for ``view`` and wait for the figure it draws."""
    choose(driver, "pview", view)
    choose(driver, "pmethod", method)
    drawn = driver.find_element("id", "projection-out").get_attribute("data-drawn") or "0"
    submit(driver, "projection", **fields)
    wait_for(driver, lambda d: (d.find_element("id", "projection-out").get_attribute("data-drawn") or "0") != drawn,
             f"the {view} projection")


def labels(driver) -> list[str]:
    return texts(driver, "#projection-plot g.point text")


def fills(driver) -> list[str]:
    return [c.get_attribute("fill") for c in driver.find_elements("css selector", "#projection-plot g.point circle")]


def download(driver, button: str, suffix: str):
    """Click an export and return the file it saved (waits for the download to end)."""
    for old in driver.downloads.glob(f"*{suffix}"):
        old.unlink()
    driver.find_element("id", button).click()
    done = wait_for(driver, lambda d: [p for p in d.downloads.glob(f"*{suffix}")
                                       if not p.with_name(p.name + ".crdownload").exists()], f"the {suffix} download")
    path = done[0]
    wait_for(driver, lambda d: path.stat().st_size > 0, f"{path.name} written")
    return path


def hover(driver, i: int) -> str:
    """Move the mouse onto the i-th point; the tooltip's text."""
    from selenium.webdriver.common.action_chains import ActionChains

    point = driver.find_elements("css selector", "#projection-plot g.point circle")[i]
    ActionChains(driver).move_to_element(point).perform()
    tip = driver.find_element("id", "projection-tip")
    wait_for(driver, lambda d: tip.is_displayed() and tip.text.startswith(labels(d)[i]), f"the tooltip of point {i}")
    return tip.text


def screenshot(driver, shots, view: str) -> None:
    section = driver.find_element("id", "projection")
    driver.execute_script("arguments[0].scrollIntoView()", section)
    path = shots / f"projection-{view}.png"
    assert section.screenshot(str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000


def test_the_page_answers_in_a_real_browser(served, browser, tmp_path):
    browser.get(served + "/")
    ready(browser)
    assert browser.find_element("id", "index").get_attribute("value") == "glove"

    submit(browser, "neighbors", word="king")
    wait_for(browser, lambda d: "queen" in cells(d, "neighbors", "td.word"), "queen among king's neighbours")
    assert cells(browser, "neighbors", "td.word")[:2] == ["prince", "queen"]

    submit(browser, "analogy", a="man", a_star="king", b="woman")
    wait_for(browser, lambda d: cells(d, "analogy", "td.word")[:1] == ["queen"], "queen as the analogy's answer")

    submit(browser, "senses", sentence="they fished from the bank of the stream", target="bank")
    wait_for(browser, lambda d: len(cells(d, "senses", "tbody tr")) == 6, "the sense ranking")
    assert cells(browser, "senses", ".sense") == [RIVER] * 3 + [MONEY] * 3
    # each sense key with its WordNet gloss, as the API gives it with definitions=1
    ranked = api(served, "senses", {"index": "bank", "sentence": "they fished from the bank of the stream",
                                    "target": "bank", "definitions": 1})["rows"]
    glosses = cells(browser, "senses", ".gloss")
    assert glosses == [r["definition"] for r in ranked] and "slope" in glosses[0] and "financial" in glosses[3]
    marks = browser.find_elements("css selector", "#senses-out td mark")
    assert [m.text for m in marks] == ["bank"] * 6
    colours = [m.value_of_css_property("background-color") for m in marks]
    assert len(set(colours[:3])) == 1 and len(set(colours[3:])) == 1 and colours[0] != colours[3]

    wait_for(browser, lambda d: len(d.find_elements("css selector", "#relation option")) > 40, "BATS relations")
    choose(browser, "relation", "I01")
    browser.find_element("css selector", "#offsets-form button[type=submit]").click()
    wait_for(browser, lambda d: len(d.find_elements("css selector", "#offsets-plot .true circle")) >= 45,
             "the offset scatter")
    assert "OCS" in browser.find_element("id", "offsets-scores").text

    submit(browser, "probe", text="A lime is a kind of ___ .")
    wait_for(browser, lambda d: len(cells(d, "probe", "tbody tr")) == 10, "the probe's ten tokens")

    # every table exports the API's own CSV of the same request
    rows = list(csv.DictReader(download(browser, "neighbors-csv", ".csv").open(newline="")))
    assert [r["word"] for r in rows] == [r["word"] for r in api(served, "neighbors", {"index": "glove",
                                                                                    "word": "king"})["rows"]]
    assert [r["sense"] for r in csv.DictReader(download(browser, "senses-csv", ".csv").open(newline=""))] \
        == [r["sense"] for r in ranked]
    figure = ET.parse(download(browser, "offsets-svg", ".svg")).getroot()
    assert len(figure.findall(".//{http://www.w3.org/2000/svg}g[@class='true']/{http://www.w3.org/2000/svg}g")) >= 45

    shot = tmp_path / "serve.png"
    assert browser.save_screenshot(str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000

    # the view lives in the URL: opening the same address in a fresh page shows the same results
    state = urllib.parse.parse_qs(urllib.parse.urlparse(browser.current_url).query)
    assert state["word"] == ["king"] and state["b"] == ["woman"] and state["relation"] == ["I01"]
    browser.get("about:blank")
    browser.get(served + "/?" + urllib.parse.urlencode({k: v[0] for k, v in state.items()}))
    ready(browser)
    assert cells(browser, "neighbors", "td.word")[:2] == ["prince", "queen"]
    assert cells(browser, "analogy", "td.word")[:1] == ["queen"]
    assert len(browser.find_elements("css selector", "#offsets-plot .true circle")) >= 45
    assert len(cells(browser, "senses", "tbody tr")) == 6


def test_bad_input_shows_the_servers_message(served, browser):
    browser.get(served + "/?word=qxqxqxzz")
    ready(browser)
    assert browser.find_element("id", "neighbors-error").text == "unknown word 'qxqxqxzz' (not in index 'glove')"


def test_selectors_and_results_say_loading_until_their_data_lands(served, browser):
    # the browser holds every /api/ request (CDP Fetch) until released: what a slow server shows
    browser.execute_cdp_cmd("Fetch.enable", {"patterns": [{"urlPattern": "*/api/*"}]})
    try:
        browser.get(served + "/")
        assert browser.find_element("id", "index").text == "loading…"
        assert browser.find_element("id", "tokens").text == "loading…"
        assert browser.find_element("id", "status").text == "loading the indexes…"
    finally:
        browser.execute_cdp_cmd("Fetch.disable", {})  # lets the held requests go
    ready(browser)
    assert browser.find_element("id", "index").text.startswith("glove (400000 x 50)")
    assert browser.find_element("id", "status").text == ""
    assert not browser.find_element("id", "projection-loading").is_displayed()

    choose(browser, "pview", "words")
    browser.find_element("id", "pwords").send_keys("king queen")
    browser.execute_cdp_cmd("Fetch.enable", {"patterns": [{"urlPattern": "*/api/projection*"}]})
    try:
        browser.find_element("css selector", "#projection-form button[type=submit]").click()
        loading = browser.find_element("id", "projection-loading")
        wait_for(browser, lambda d: loading.is_displayed(), "loading… under the projection form", timeout=10)
        assert loading.text == "loading…" and not labels(browser)
    finally:
        browser.execute_cdp_cmd("Fetch.disable", {})
    wait_for(browser, lambda d: labels(d) == ["king", "queen"], "the projection once released")
    assert not loading.is_displayed()


def test_a_home_without_indexes_says_so_in_its_selectors(browser, tmp_path, shared_data):
    home = tmp_path / "indexes"
    home.mkdir()
    with Running(home, data_places=[shared_data]) as url:
        browser.get(url + "/")
        ready(browser)
        assert browser.find_element("id", "index").text == "(no words index)"
        assert browser.find_element("id", "tokens").text == "(no tokens index)"
        assert browser.find_element("id", "prelation").get_attribute("textContent") == "(no words index)"
        choose(browser, "pview", "words")
        submit(browser, "projection", pwords="king queen")
        error = api_error(url, "projection", {"index": "", "view": "words", "method": "pca", "seed": 0,
                                              "words": "king queen"})
        wait_for(browser, lambda d: d.find_element("id", "projection-error").text == error, "the inline error")


def test_a_typed_word_list_gives_a_labelled_projection_and_its_exports(served, browser, shots):
    browser.get(served + "/")
    ready(browser)
    typed = ", ".join(WORDS[:4]) + "\n" + " ".join(WORDS[4:]) + "\n" + UNKNOWN
    project(browser, "words", pwords=typed)
    body = api(served, "projection", {"index": "glove", "view": "words", "method": "pca", "seed": 0, "words": typed})
    assert labels(browser) == [p["label"] for p in body["points"]] and sorted(labels(browser)) == sorted(WORDS)
    assert texts(browser, "#projection-unknown li") == body["unknown"] == [UNKNOWN]
    info = browser.find_element("id", "projection-info").text
    assert f"PCA computed by {body['library']}, seed {body['seed']}" in info and f"{len(WORDS)} points" in info

    # each point sits where the API put it: one scale for both axes, y drawn downwards
    at = np.array([[float(v) for v in g.get_attribute("transform")[len("translate("):-1].split(",")]
                   for g in browser.find_elements("css selector", "#projection-plot g.point")])
    xy = np.array([[p["x"], p["y"]] for p in body["points"]])
    scale = np.ptp(at[:, 0]) / np.ptp(xy[:, 0])
    assert scale > 0
    assert np.allclose(at - at.mean(0), (xy - xy.mean(0)) * [scale, -scale], atol=0.02)

    # search highlights the matching labels only
    browser.find_element("id", "psearch").send_keys("fran")
    assert texts(browser, "#projection-plot g.point.hit text") == ["france"]
    assert browser.find_element("id", "psearch-count").text == f"1 of {len(WORDS)} labels match"
    assert len(browser.find_elements("css selector", "#projection-plot g.point.dim")) == len(WORDS) - 1

    # hover: the tooltip names the point
    assert hover(browser, labels(browser).index("queen")).startswith("queen")

    # exports: CSV and JSON hold the API's points, the SVG the labels, the PNG is a picture
    rows = list(csv.DictReader(download(browser, "projection-csv", ".csv").open(newline="")))
    assert [r["label"] for r in rows] == [p["label"] for p in body["points"]]
    assert np.allclose([[float(r["x"]), float(r["y"])] for r in rows], xy, rtol=1e-6, atol=1e-9)
    assert [r["group"] for r in rows] == [str(p["group"] or "") for p in body["points"]]
    saved = json.loads(download(browser, "projection-json", ".json").read_text())
    assert [p["label"] for p in saved["points"]] == labels(browser)
    assert np.allclose([[p["x"], p["y"]] for p in saved["points"]], xy, rtol=1e-6, atol=1e-9)
    assert (saved["library"], saved["seed"], saved["unknown"]) == (body["library"], body["seed"], [UNKNOWN])
    figure = ET.parse(download(browser, "projection-svg", ".svg")).getroot()
    assert sorted(t.text for t in figure.iter("{http://www.w3.org/2000/svg}text") if t.text in WORDS) == sorted(WORDS)
    png = download(browser, "projection-png", ".png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(png[16:20], "big") == 1800  # width
    screenshot(browser, shots, "words")

    # the inputs live in the URL: the same address draws the same projection with the same search
    state = urllib.parse.parse_qs(urllib.parse.urlparse(browser.current_url).query)
    assert state["pview"] == ["words"] and state["pwords"] == [typed.strip()] and state["psearch"] == ["fran"]
    browser.get("about:blank")
    browser.get(served + "/?" + urllib.parse.urlencode({k: v[0] for k, v in state.items()}))
    ready(browser)
    assert labels(browser) == [p["label"] for p in body["points"]]
    assert texts(browser, "#projection-plot g.point.hit text") == ["france"]

    # a list too long for the address is left out of it, and the page says so
    frequent = api(served, "neighbors", {"index": "glove", "word": "the", "k": 300})["rows"]
    long_list = " ".join(r["word"] for r in frequent if r["word"].isalpha())
    assert len(long_list) > 1500
    browser.find_element("id", "psearch").clear()
    project(browser, "words", pwords=long_list)
    assert labels(browser) == long_list.split()
    assert "pwords" not in urllib.parse.parse_qs(urllib.parse.urlparse(browser.current_url).query)
    assert "too long to keep in the address" in browser.find_element("id", "projection-info").text

    # the server's error shows inline, in the projection's own line
    choose(browser, "pview", "neighbors")
    submit(browser, "projection", pword=UNKNOWN)
    error = api_error(served, "projection", {"index": "glove", "view": "neighbors", "method": "pca", "seed": 0,
                                             "word": UNKNOWN, "k": 30})
    wait_for(browser, lambda d: d.find_element("id", "projection-error").text == error, "the inline error")


def test_colouring_offsets_uploads_and_every_view(served, browser, shots, tmp_path):
    browser.get(served + "/")
    ready(browser)

    # a BATS relation: its pairs with an arrow per offset; colour by side, then by frequency bucket
    choose(browser, "pview", "relation")
    wait_for(browser, lambda d: len(d.find_elements("css selector", "#prelation option")) > 40, "BATS relations")
    choose(browser, "prelation", "I01")
    project(browser, "relation")
    body = api(served, "projection", {"index": "glove", "view": "relation", "method": "pca", "seed": 0,
                                      "dataset": "bats", "relation": "I01"})
    assert labels(browser) == [p["label"] for p in body["points"]] and len(body["edges"]) >= 40
    arrows = browser.find_elements("css selector", "#projection-plot line.edge")
    assert len(arrows) == len(body["edges"]) and all(a.get_attribute("marker-end") == "url(#arrow)" for a in arrows)

    def coloured_by(field: str) -> list[str]:
        choose(browser, "pcolour", field)
        values = [str(p[field]) for p in body["points"]]
        painted = fills(browser)
        # one colour per value (the palette has ten), and a legend entry for each
        assert len(set(zip(values, painted))) == len(set(values)) == len(set(painted)) <= 10
        legend = texts(browser, "#projection-legend g.entry text")
        assert sorted(legend) == sorted(set(values))
        return painted

    by_bucket = coloured_by("frequency_bucket")
    by_side = coloured_by("group")
    assert len(set(by_side)) >= 2 and by_side != by_bucket
    screenshot(browser, shots, "relation")

    # your own pairs, uploaded as a two-column CSV file: the unknown pair listed, not fatal
    pairs = tmp_path / "pairs.csv"
    pairs.write_text(f"paris,france\nberlin,germany\n{UNKNOWN},france\n")
    browser.find_element("id", "ppairs-file").send_keys(str(pairs))
    box = browser.find_element("id", "ppairs")
    wait_for(browser, lambda d: box.get_attribute("value") == f"paris france\nberlin germany\n{UNKNOWN} france",
             "the uploaded pairs in their box")
    project(browser, "relation")
    own = api(served, "projection", {"index": "glove", "view": "relation", "method": "pca", "seed": 0,
                                     "pairs": box.get_attribute("value")})
    assert labels(browser) == [p["label"] for p in own["points"]]
    assert set(labels(browser)) == {"paris", "france", "berlin", "germany"}
    assert len(browser.find_elements("css selector", "#projection-plot line.edge")) == len(own["edges"]) == 2
    assert texts(browser, "#projection-unknown li") == own["unknown"] and UNKNOWN in " ".join(own["unknown"])
    box.clear()

    # a word's neighbourhood by t-SNE: the page says which library and seed computed it
    project(browser, "neighbors", method="tsne", pword="frog", pnk="12", pseed="7")
    near = api(served, "projection", {"index": "glove", "view": "neighbors", "method": "tsne", "seed": 7,
                                      "word": "frog", "k": 12})
    assert labels(browser) == [p["label"] for p in near["points"]] and "frog" in labels(browser)
    assert f"t-SNE computed by {near['library']}, seed 7" in browser.find_element("id", "projection-info").text
    choose(browser, "pcolour", "group")
    painted = dict(zip([p["label"] for p in near["points"]], fills(browser)))
    assert painted["frog"] not in [painted[p["label"]] for p in near["points"] if p["label"] != "frog"]
    neighbour = next(p for p in near["points"] if p["label"] != "frog")
    hover(browser, labels(browser).index(neighbour["label"]))
    assert f"score: {neighbour['score']:.4f}" in browser.find_element("id", "projection-tip").text
    screenshot(browser, shots, "neighbors")

    # a lemma's tokens by sense: the legend gives each sense key its WordNet gloss
    project(browser, "senses", plemma="bank")
    senses = api(served, "projection", {"index": "bank", "view": "senses", "method": "pca", "seed": 0,
                                        "lemma": "bank", "definitions": 1})
    assert len(labels(browser)) == len(senses["points"]) == 6
    legend = texts(browser, "#projection-legend g.entry text")
    gloss = {p["group"]: p["gloss"] for p in senses["points"]}
    assert sorted(legend) == sorted(f"{key} — {text}" for key, text in gloss.items())
    assert set(gloss) == {RIVER, MONEY} and all(gloss.values())
    painted = dict(zip([p["group"] for p in senses["points"]], fills(browser)))
    assert painted[RIVER] != painted[MONEY]
    hover(browser, 0)
    assert f"gloss: {senses['points'][0]['gloss']}" in browser.find_element("id", "projection-tip").text
    screenshot(browser, shots, "senses")

    # words inserted by OTA and AM beside their nearest originals (in the index "small")
    choose(browser, "index", "small")
    project(browser, "inserted", pik="4")
    inserted = api(served, "projection", {"index": "small", "view": "inserted", "method": "pca", "seed": 0, "k": 4})
    assert labels(browser) == [p["label"] for p in inserted["points"]]
    assert {p["label"] for p in inserted["points"] if p["origin"] in ("ota", "am")} == set(INSERTED_WORDS)
    assert {"king", "queen", "river", "lake", "car", "bus"} <= set(labels(browser))
    choose(browser, "pcolour", "origin")
    painted = dict(zip([p["origin"] for p in inserted["points"]], fills(browser)))
    assert len(painted) == len(set(painted.values())) == 3  # ota, am and the GloVe file
    screenshot(browser, shots, "inserted")


def positions(driver) -> dict[str, np.ndarray]:
    """Each point's place in the figure (its translate), by label."""
    return {g.get_attribute("data-label"): np.array([float(v) for v in
                                                     g.get_attribute("transform")[len("translate("):-1].split(",")])
            for g in driver.find_elements("css selector", "#projection-plot g.point")}


def test_the_projection_as_an_analysts_projector(served, browser, tmp_path):
    from selenium.webdriver.common.action_chains import ActionChains

    browser.get(served + "/")
    ready(browser)
    plotted = ["king", "queen", "prince", "princess", "man", "woman", "monarch", "throne", "paris", "france", "King"]

    # two word axes: x from man to woman puts queen right of king (and princess right of prince)
    project(browser, "words", method="axes", pwords=" ".join(plotted), pxaxis="man->woman", pyaxis="paris->france")
    at = positions(browser)
    assert at["queen"][0] > at["king"][0] and at["princess"][0] > at["prince"][0] and at["woman"][0] > at["man"][0]
    assert "x: cosine with man->woman (1 pairs)" in browser.find_element("id", "projection-info").text
    # the unknown word with the CLI's suggestion
    assert texts(browser, "#projection-unknown li") == ["King (try 'king')"]

    # zoom: the button and the wheel spread the points around the centre; a drag pans; reset puts them back
    plot = browser.find_element("id", "projection-plot")
    spread = lambda p: np.linalg.norm(p["queen"] - p["paris"])  # noqa: E731
    browser.find_element("id", "projection-zoom-in").click()
    assert plot.get_attribute("data-zoom") == "1.500"
    assert spread(positions(browser)) == pytest.approx(1.5 * spread(at), rel=1e-3)
    browser.execute_script("""const svg = arguments[0], box = svg.getBoundingClientRect();
        svg.dispatchEvent(new WheelEvent('wheel', {deltaY: -300, clientX: box.left + box.width / 2,
                                                   clientY: box.top + 100, bubbles: true, cancelable: true}));""", plot)
    assert float(plot.get_attribute("data-zoom")) == pytest.approx(1.5 * np.e, rel=1e-3)
    before = positions(browser)
    paper = browser.find_element("css selector", "#projection-plot rect.paper")
    ActionChains(browser).move_to_element_with_offset(paper, -300, -200).click_and_hold().move_by_offset(40, 0) \
        .move_by_offset(40, 0).release().perform()
    moved = positions(browser)
    shift = moved["king"] - before["king"]
    assert shift[0] > 20 and abs(shift[1]) < 2 and np.allclose(moved["queen"] - before["queen"], shift, atol=0.05)
    browser.find_element("id", "projection-zoom-reset").click()
    assert all(np.allclose(positions(browser)[w], at[w], atol=0.01) for w in at)

    # a click on a point rings its k nearest words in the index (as /api/neighbors gives them) among the plotted
    project(browser, "words", method="pca", pwords=" ".join(plotted), pclickk="8")
    browser.find_element("css selector", "#projection-plot g.point[data-label='king'] circle").click()
    wait_for(browser, lambda d: d.find_element("id", "projection-plot").get_attribute("data-near") == "8",
             "king's neighbours")
    near = [r["word"] for r in api(served, "neighbors", {"index": "glove", "word": "king", "k": 8})["rows"]]
    assert sorted(texts(browser, "#projection-plot g.point.near text")) == sorted(set(near) & set(plotted))
    assert {"queen", "prince"} <= set(texts(browser, "#projection-plot g.point.near text"))
    assert texts(browser, "#projection-plot g.point.selected text") == ["king"]
    assert [s.text.split()[0] for s in browser.find_elements("css selector", "#projection-near span")] == near

    # colour by a column of the user's metadata file
    meta = tmp_path / "gender.csv"
    meta.write_text("word,gender\nking,m\nqueen,f\nman,m\nwoman,f\nprince,m\n")
    drawn = browser.find_element("id", "projection-out").get_attribute("data-drawn")
    browser.find_element("id", "pmeta-file").send_keys(str(meta))
    wait_for(browser, lambda d: d.find_element("id", "projection-out").get_attribute("data-drawn") != drawn,
             "the projection with the metadata")
    choose(browser, "pcolour", "meta:gender")
    painted = dict(zip(labels(browser), fills(browser)))
    assert painted["king"] == painted["man"] == painted["prince"] != painted["queen"] == painted["woman"]
    assert painted["paris"] == "#aaa" and painted["king"] != "#aaa"  # not in the file: no value
    assert sorted(texts(browser, "#projection-legend g.entry text")) == ["(none)", "f", "m"]

    # labels never overlap: a dense cloud shows the labels that fit, and zooming in shows more
    frequent = [r["word"] for r in api(served, "neighbors", {"index": "glove", "word": "the", "k": 300})["rows"]
                if r["word"].isalpha()]
    project(browser, "words", pwords=" ".join(frequent))
    boxes = browser.execute_script("""return [...document.querySelectorAll('#projection-plot g.point:not(.crowded) text')]
        .map((t) => { const b = t.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; });""")
    shown = len(boxes)
    assert 5 < shown < len(frequent)
    overlaps = [(a, b) for n, a in enumerate(boxes) for b in boxes[:n]
                if a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5]
    assert overlaps == []
    inside = lambda: sum(0 <= x <= 900 and 0 <= y <= 540 for x, y in positions(browser).values())  # noqa: E731
    assert int(plot.get_attribute("data-labels")) == shown and inside() == len(frequent)
    for _ in range(3):  # zoomed in, the points left in the plot have room for more of their labels
        browser.find_element("id", "projection-zoom-in").click()
    assert int(plot.get_attribute("data-labels")) / inside() > 1.5 * shown / len(frequent)


def test_an_unknown_word_shows_the_clis_suggestion(served, browser):
    browser.get(served + "/?word=King")
    ready(browser)
    assert browser.find_element("id", "neighbors-error").text == \
        "unknown word 'King' (not in index 'glove'; try 'king')"
