"""The map page in a real browser: Debian's chromium, headless, driven by Playwright from
PyPI pointed at the system executable (no browser download, no network).

The scenario is the issue's: the page loads with no map tiles reachable; fences and a
device appear; a fix moves the device and lights the fence it enters; adding a fence
through the page shows the Peek (clamped radius, warning) and Pop commits it; a stale
preview is refused with the reason; Delete... with Cancel keeps a fence and with Delete
removes it; the fence file holds what the page did; a change by another client shows,
fetched from api/fences on the stream's `fences` notice, one fetch at a time (a notice
during a fetch brings one more after it) and a refused fetch tried again; a refused stream
opened again after 5 s (on Playwright's clock); a device the bridge forgets (the fence
file stops naming it) leaves an open page without a reload; the Add screen
is reachable by keyboard; screenshots at desktop and phone size. Only the backend (console_backends)
changes between the fixture and the real bridge.

Usage: browser_test.py BACKEND BINARY SCREENSHOT_DIRECTORY, where BACKEND names a class
in console_backends (`fixture`: BINARY is geotify-console-fixture). Exits non-zero
with the reason; every wait is bounded.
"""

import json
import os
import re
import sys

sys.dont_write_bytecode = True  # keep the source tree clean of __pycache__

from playwright.sync_api import expect, sync_playwright

from console_backends import BridgeBackend, FixtureBackend

CHROMIUM = "/usr/bin/chromium"
WAIT_MS = 15_000


def fence_file(backend):
    with open(backend.fences_path) as file:
        return json.load(file)


def own_identifiers(backend, device="alice/phone"):
    return [fence["identifier"] for fence in fence_file(backend)["devices"].get(device, [])]


def is_fence_list_url(url):
    return url.split("?", 1)[0].endswith("/api/fences")


def is_fence_list(request):
    """The page's fetch of the fence list (what it does on a `fences` notice)."""
    return request.method == "GET" and is_fence_list_url(request.url)


def edit_note(backend, fence, note, device="alice/phone"):
    """Changes a fence's note as another client would, while the page looks on."""
    status, body = backend.request("POST", f"api/cmd/{device}", {"action": "edit", "fence": fence, "changes": {"note": note}})
    assert status == 200, (status, body)


def refusing_first(refused, retry_after):
    """A route handler that answers the first request as the console refuses one
    (429 too_many_unread with `Retry-After`), noting its URL in `refused`, and lets the
    others through."""
    def handle(route):
        if refused:
            route.continue_()
        else:
            refused.append(route.request.url)
            route.fulfill(status=429, headers={"Retry-After": str(retry_after)}, content_type="application/json",
                          body='{"ok":false,"error":{"code":"too_many_unread","message":"read what you asked for first"}}')
    return handle


def launch(playwright):
    """Debian's chromium, resolving no host name but the loopback address: the tests
    talk to 127.0.0.1 only, and without the rule the browser's own services (autofill,
    accounts, updates) asked the machine's name server for Google's hosts."""
    arguments = ["--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"]
    if os.geteuid() == 0:
        arguments.append("--no-sandbox")
    return playwright.chromium.launch(executable_path=CHROMIUM, args=arguments)


def open_page(browser, backend):
    """A fresh browser context and page on `backend`, and the list its page errors go to."""
    context = browser.new_context(viewport={"width": 1280, "height": 800}, http_credentials=backend.credentials)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    return context, page, errors


def scenario(browser, backend, screenshots):
    context, page, errors = open_page(browser, backend)

    # The page loads with no tiles reachable, and shows the fences.
    page.goto(backend.url)
    expect(page.locator("#live")).to_have_text("live")
    expect(page.locator("#fences")).to_contain_text("home")
    expect(page.locator("#fences")).to_contain_text("dateline")
    expect(page.locator(".leaflet-control-scale")).to_be_visible()
    expect(page.locator("#coordinates")).to_have_text(re.compile(r"^-?\d+\.\d{5}, -?\d+\.\d{5}$"))
    assert page.locator("path.leaflet-interactive").count() >= 4, "fences are not drawn"

    # A fix outside, then inside home: the device appears, moves, and lights the fence.
    backend.move("alice/phone", 52.50, 13.405, 1_700_000_000)
    expect(page.locator("#devices")).to_contain_text("alice/phone")
    expect(page.locator("#devices")).to_contain_text("in no fence")
    backend.move("alice/phone", 52.52, 13.405, 1_700_000_100)
    expect(page.locator("#devices")).to_contain_text("in home")
    expect(page.locator("#notifications li").first).to_contain_text("enter home")
    lit = page.locator("path.leaflet-interactive[stroke='#15803d']")
    expect(lit.first).to_be_attached()

    # Add through the page: go to a typed position, click the map there, type, Peek
    # (the radius clamped, with the warning), Pop.
    page.fill("#goto-text", "52.5215, 13.4135")
    page.press("#goto-text", "Enter")
    page.locator("#map").click(position={"x": 448, "y": 400})
    expect(page.locator("#editor")).to_be_visible()
    page.fill("#f-device", "alice/phone")
    page.fill("#f-identifier", "gym")
    page.fill("#f-radius", "0")
    page.fill("#f-note", "Leg day")
    page.select_option("#f-event", "onEntryAndExit")
    page.click("#peek-button")
    expect(page.locator("#peek")).to_be_visible()
    expect(page.locator("#peek-details")).to_contain_text("1 m")
    expect(page.locator("#peek-warnings li").first).to_contain_text("clamped")
    assert "gym" not in own_identifiers(backend), "the Peek changed the file"
    page.screenshot(path=os.path.join(screenshots, "console-peek.png"))
    # The stream only says that the fences changed; the page fetches the new list.
    with page.expect_request(is_fence_list):
        page.click("#pop-button")
    expect(page.locator("#message")).to_contain_text("gym saved")
    expect(page.locator("#fences")).to_contain_text("gym")
    stored = [fence for fence in fence_file(backend)["devices"]["alice/phone"] if fence["identifier"] == "gym"]
    assert stored and stored[0]["radius"] == 1 and stored[0]["note"] == "Leg day", stored

    # Edit home, Peek, then someone else changes the file: Pop is refused as stale.
    page.locator("#fences li[data-fence='alice/phone/home'] button", has_text="Edit").click()
    page.fill("#f-radius", "30")
    page.click("#peek-button")
    expect(page.locator("#peek")).to_be_visible()
    with page.expect_request(is_fence_list):
        edit_note(backend, "park", "meanwhile")
    expect(page.locator("#fences li[data-fence='alice/phone/park']")).to_contain_text("meanwhile")
    page.click("#pop-button")
    expect(page.locator("#message")).to_contain_text("stale")
    assert [fence["radius"] for fence in fence_file(backend)["devices"]["alice/phone"] if fence["identifier"] == "home"] == [100]
    page.click("#editor-cancel")

    # Delete... with Cancel keeps the fence; with Delete removes it.
    page.locator("#fences li[data-fence='alice/phone/gym'] button", has_text="Delete").click()
    expect(page.locator("#confirm-delete")).to_be_visible()
    page.click("#confirm-cancel")
    expect(page.locator("#message")).to_contain_text("kept gym")
    assert "gym" in own_identifiers(backend)
    page.locator("#fences li[data-fence='alice/phone/gym'] button", has_text="Delete").click()
    expect(page.locator("#confirm-delete")).to_be_visible()
    page.click("#confirm-delete-button")
    expect(page.locator("#message")).to_contain_text("deleted gym")
    expect(page.locator("#fences")).not_to_contain_text("gym")
    assert own_identifiers(backend) == ["home", "park"], own_identifiers(backend)

    # The Add screen by keyboard alone.
    page.locator("#add-fence").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#editor")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#editor")).to_be_hidden()

    page.screenshot(path=os.path.join(screenshots, "console-desktop.png"))

    # One fetch of the list at a time: a notice during a fetch asks for one more after it.
    park = page.locator("#fences li[data-fence='alice/phone/park']")
    held = []

    def hold(route):
        if held:
            route.continue_()
        else:
            held.append(route)

    page.route(is_fence_list_url, hold)
    with page.expect_request(is_fence_list):
        edit_note(backend, "park", "held")
    edit_note(backend, "park", "while held")
    page.wait_for_function("() => fenceFetch.again")
    assert len(held) == 1, "a second fetch while the first is held"
    with page.expect_request(is_fence_list) as one_more:
        held[0].continue_()
    assert one_more.value.response().ok
    expect(park).to_contain_text("while held")
    page.unroute(is_fence_list_url, hold)

    # A refused fetch (429 too_many_unread) is tried again after its Retry-After. (The
    # note goes back to the one the phone's screenshot shows.)
    refused = []
    refuse_once = refusing_first(refused, retry_after=1)
    page.route(is_fence_list_url, refuse_once)
    edit_note(backend, "park", "meanwhile")
    expect(park).to_contain_text("meanwhile")
    assert len(refused) == 1, refused
    page.unroute(is_fence_list_url, refuse_once)

    assert not errors, f"script errors: {errors}"
    context.close()

    # Phone size, touch: the map and the panel are both there.
    phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True,
                                device_scale_factor=2, http_credentials=backend.credentials)
    page = phone.new_page()
    page.set_default_timeout(WAIT_MS)
    page.goto(backend.url)
    expect(page.locator("#live")).to_have_text("live")
    expect(page.locator("#devices")).to_contain_text("in home")
    page.locator("#map").tap(position={"x": 200, "y": 200})
    expect(page.locator("#editor")).to_be_visible()
    page.locator("#editor-cancel").tap()
    page.screenshot(path=os.path.join(screenshots, "console-phone.png"), full_page=True)
    phone.close()

    stream_refused_then_reopened(browser, backend)
    forgotten_device_leaves_the_page(browser, backend)


def is_event_stream_url(url):
    return url.split("?", 1)[0].endswith("/api/events")


def stream_refused_then_reopened(browser, backend):
    """A stream the console refuses (429 too_many_unread, 503 too_many_streams) the
    browser does not reconnect by itself: the page opens it again 5 s later. The page's
    timers run on Playwright's clock, paused and moved on by hand, so nothing here sleeps
    and no time passes unseen; the page
    counts the streams it opens, which a timer that fired has done before `run_for`
    returns."""
    context = browser.new_context(viewport={"width": 1280, "height": 800}, http_credentials=backend.credentials)
    context.add_init_script("""
        window.streamsOpened = 0;
        window.EventSource = class extends window.EventSource {
          constructor(...parameters) { super(...parameters); window.streamsOpened += 1; }
        };
    """)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.clock.install(time=1_700_000_000_000)
    page.clock.pause_at(1_700_000_001_000)
    refused = []
    page.route(is_event_stream_url, refusing_first(refused, retry_after=5))
    page.goto(backend.url)
    expect(page.locator("#live")).to_have_text("reconnecting…")
    assert page.evaluate("window.streamsOpened") == 1
    page.clock.run_for(4_900)
    assert page.evaluate("window.streamsOpened") == 1, "the refused stream was opened again before 5 s"
    page.clock.run_for(200)
    assert page.evaluate("window.streamsOpened") == 2, "the refused stream was not opened again after 5 s"
    expect(page.locator("#live")).to_have_text("live")
    expect(page.locator("#fences")).to_contain_text("home")
    assert len(refused) == 1, refused
    assert not errors, f"script errors: {errors}"
    context.close()


def forgotten_device_leaves_the_page(browser, backend):
    """A device the bridge forgets (here the fence file stops naming it; an idle device
    evicted to make room is told the same way) leaves an open page live, on the
    stream's `forgotten` event: its marker and its entry in the list go, without a
    reload, and another device stays. Runs last: the file no longer names alice/phone
    after it."""
    context, page, errors = open_page(browser, backend)
    page.goto(backend.url)
    expect(page.locator("#live")).to_have_text("live")
    backend.move("alice/tablet", 52.51, 13.39, 1_700_000_200)
    markers = page.locator("#map path[stroke='#0f172a']")
    phone = page.locator("#devices li[data-device='alice/phone']")
    tablet = page.locator("#devices li[data-device='alice/tablet']")
    expect(tablet).to_be_attached()
    expect(phone).to_be_attached()
    expect(markers).to_have_count(2)
    page.evaluate("window.notReloaded = true")
    backend.unname("alice/phone")
    expect(phone).to_have_count(0)
    expect(markers).to_have_count(1)
    expect(tablet).to_be_attached()
    assert "alice/phone" not in page.locator("#devices").inner_text()
    assert page.evaluate("window.notReloaded === true"), "the page was reloaded"
    assert not errors, f"script errors: {errors}"
    context.close()


BACKENDS = {"fixture": FixtureBackend, "bridge": BridgeBackend}


def main():
    name, binary, screenshots = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(screenshots, exist_ok=True)
    backend = BACKENDS[name](binary)
    try:
        with sync_playwright() as playwright:
            browser = launch(playwright)
            try:
                scenario(browser, backend, screenshots)
            finally:
                browser.close()
        print("browser scenario passed; screenshots in", screenshots)
    finally:
        backend.stop()


if __name__ == "__main__":
    main()
