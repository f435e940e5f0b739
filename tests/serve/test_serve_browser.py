"""The page of ``lexprobe serve`` in a real browser: Debian's chromium, headless, driven by selenium through the
system's chromedriver (nothing downloaded). The test starts the server itself on a free loopback port. A missing
browser fails the test: the page is a feature, not an option."""

from __future__ import annotations

import shutil
import urllib.parse

import pytest

from lexprobe.serve.app import Running
from serve_fixtures import MONEY, RIVER, serve_home

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1400,1100"]


@pytest.fixture(scope="module")
def served(tmp_path_factory, glove_home, shared_data):
    home = serve_home(tmp_path_factory.mktemp("serve"), glove_home)
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
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS + [f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


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
    marks = browser.find_elements("css selector", "#senses-out td mark")
    assert [m.text for m in marks] == ["bank"] * 6
    colours = [m.value_of_css_property("background-color") for m in marks]
    assert len(set(colours[:3])) == 1 and len(set(colours[3:])) == 1 and colours[0] != colours[3]

    wait_for(browser, lambda d: len(d.find_elements("css selector", "#relation option")) > 40, "BATS relations")
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element("id", "relation")).select_by_value("I01")
    browser.find_element("css selector", "#offsets-form button[type=submit]").click()
    wait_for(browser, lambda d: len(d.find_elements("css selector", "#offsets-plot .true circle")) >= 45,
             "the offset scatter")
    assert "OCS" in browser.find_element("id", "offsets-scores").text

    submit(browser, "probe", text="A lime is a kind of ___ .")
    wait_for(browser, lambda d: len(cells(d, "probe", "tbody tr")) == 10, "the probe's ten tokens")

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
