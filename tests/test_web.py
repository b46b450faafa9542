"""The sign and consoles in a real headless browser (Playwright driving Debian's chromium)."""

import json
import random
import shutil
import urllib.request

import pytest

from controller.auth import Role
from controller.config import load_config
from controller.fusion import CameraCard
from controller.service import TableService
from controller.storage import Store
from controller.web.app import create_app
from controller.web.server import WebServer

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed "
                                "(.ci/run installs it)")

PASSWORDS = {Role.DEALER: "dealer-pass-123", Role.FLOORPERSON: "floor-pass-1234",
             Role.SURVEILLANCE: "surv-pass-12345"}


@pytest.fixture
def site(tmp_path):
    store = Store(tmp_path / "web.db")
    svc = TableService(store, load_config(), rng=random.Random(5))
    for role, pw in PASSWORDS.items():
        svc.auth.add_user(role.value, role, pw)
    server = WebServer(create_app(svc, tmp_path))
    url = server.start()
    yield svc, url
    server.stop()
    store.close()


@pytest.fixture
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"])
        yield b
        b.close()


def sign_in(browser, url, role, next_page):
    ctx = browser.new_context()
    page = ctx.new_page()
    page.goto(f"{url}/{next_page}")
    assert "/login" in page.url
    page.fill("#name", role.value)
    page.fill("#password", PASSWORDS[role])
    page.click("#signin")
    page.wait_for_url(f"{url}/{next_page}")
    return page


def start_round(svc, seats=(1, 2)):
    t = svc.table
    svc.call(t.open_round)
    for s in seats:
        svc.call(t.set_main, s, True)
        svc.call(t.place_wager, s)


def test_full_round_with_a_win_validated_by_floorperson(site, browser):
    svc, url = site
    sign = browser.new_page()
    sign.goto(f"{url}/sign")
    dealer = sign_in(browser, url, Role.DEALER, "dealer")
    floor = sign_in(browser, url, Role.FLOORPERSON, "floor")
    start_round(svc)
    dealer.click("text=Lock out (no more bets)")
    dealer.fill("#count", "2")
    dealer.click("text=Submit count")
    sign.wait_for_selector(".dyn")  # the Dynamic Pays are on the sign after verification
    # seats 1, 2 in: seat1 7H, seat2 2C, up 7D, seat1 7H, seat2 3S, hole 9C
    for code in ("7H", "2C", "7D", "7H", "3S", "9C"):
        svc.call(svc.table.deal, code)
    dealer.wait_for_selector("text=Reveal hole card")
    assert "Three of a Kind" not in sign.inner_text("#seats")  # nothing before the reveal
    assert "9C" not in dealer.inner_text("#cards")  # the hole card is hidden on the console too
    dealer.click("text=Reveal hole card")
    sign.wait_for_selector("#seat-1.on")
    assert "Three of a Kind Same Color" in sign.inner_text("#seat-1")
    assert "awaiting validation" in sign.inner_text("#seat-1")
    dealer.click("text=Confirm seat 1")
    floor.wait_for_selector("text=Validate seat 1")
    floor.click("text=Validate seat 1")
    sign.wait_for_selector("#seat-1 >> text=PAID")
    floor.wait_for_selector("text=No round open.")
    res = svc.store.db.execute("SELECT validated_by, paid_at FROM results").fetchone()
    assert res["validated_by"] == "floorperson" and res["paid_at"]


def test_held_round_resolved_by_floorperson(site, browser):
    svc, url = site
    dealer = sign_in(browser, url, Role.DEALER, "dealer")
    floor = sign_in(browser, url, Role.FLOORPERSON, "floor")
    start_round(svc, seats=(1,))
    svc.call(svc.table.lockout)
    svc.call(svc.table.chip_count, 1, svc.actor(_login(svc, Role.DEALER)))
    svc.call(svc.table.deal, "KH")
    # The camera sees a different card at seat 1 than the shoe reported: the cross-check holds.
    rid = svc.table.current().id
    result = svc.camera_check(rid, [CameraCard("KD", "seat1", 0.99)], hole_up=False)
    assert result.problems == ["shoe/camera disagreement at seat1: shoe KH, camera KD"]
    floor.wait_for_selector("text=HELD: shoe/camera disagreement")
    assert "KD" in floor.inner_text("#cards")  # both sources on the console
    dealer.wait_for_selector("text=HELD: shoe/camera disagreement")
    floor.fill("#note", "checked the layout: the card is KH, camera glare")
    floor.click("text=Resolve: continue")
    floor.wait_for_selector("h2:has-text('dealing')")
    assert svc.table.current().state.value == "dealing"
    held = svc.store.db.execute("SELECT payload FROM audit WHERE kind='resolved'").fetchone()
    assert "camera glare" in json.loads(held[0])["note"]


def test_dealer_cannot_do_floorperson_action(site, browser):
    svc, url = site
    dealer = sign_in(browser, url, Role.DEALER, "dealer")
    start_round(svc, seats=(1,))
    svc.call(svc.table.lockout)
    svc.call(svc.table.chip_count, 0, svc.actor(_login(svc, Role.DEALER)))  # mismatch: held
    status = dealer.evaluate("""async () => {
        const r = await fetch('/api/action/resolve', {method: 'POST',
          headers: {'Content-Type': 'application/json', 'X-Monster-Match': '1'},
          body: JSON.stringify({action: 'continue', note: 'dealer tries'})});
        return [r.status, (await r.json()).error]; }""")
    assert status[0] == 403 and "needs a floorperson" in status[1]
    assert svc.table.current().state.value == "held"
    # A floorperson page is refused to the dealer too: it redirects to sign-in.
    dealer.goto(f"{url}/floor")
    assert "/login" in dealer.url


def _login(svc, role):
    return svc.auth.login(role.value, PASSWORDS[role])


def test_sign_api_is_read_only_and_actions_need_header(site):
    svc, url = site
    with urllib.request.urlopen(f"{url}/api/sign") as r:
        view = json.loads(r.read())
    assert view["meter"] == "10000.00" and view["seats"] == 6
    req = urllib.request.Request(f"{url}/api/action/lockout", data=b"{}", method="POST")
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(req)
    assert info.value.code == 403


def test_a_redraw_keeps_what_the_dealer_is_typing(site, browser):
    """Every table event redraws the console; a chip count typed but not yet submitted stays
    in its box (a redraw between typing and clicking used to send an empty count)."""
    svc, url = site
    dealer = sign_in(browser, url, Role.DEALER, "dealer")
    start_round(svc, seats=(1, 2))
    svc.call(svc.table.lockout)
    dealer.wait_for_selector("#count")
    dealer.fill("#count", "2")
    dealer.evaluate("refresh()")  # what an event from the table does
    dealer.wait_for_selector("text=Submit count")
    assert dealer.input_value("#count") == "2"
    dealer.click("text=Submit count")
    dealer.wait_for_selector("text=dealer count 2")


def test_the_camera_condition_on_the_surveillance_and_floor_consoles(site, browser):
    """Three blurred frames in a row: surveillance and the floor see what the camera asks of
    them and what was measured, and the round's history row says so; three clear frames
    later both say the camera is clear again."""
    from controller.web.app import history_view

    svc, url = site
    surveillance = sign_in(browser, url, Role.SURVEILLANCE, "surveillance")
    floor = sign_in(browser, url, Role.FLOORPERSON, "floor")
    surveillance.wait_for_selector("text=Camera: no condition recorded")
    start_round(svc, seats=(1,))
    svc.call(svc.table.lockout)
    svc.call(svc.table.chip_count, 1, svc.actor(_login(svc, Role.DEALER)))
    rid = svc.table.current().id
    blurred = {"card_width_px": 48.0, "edge_blur_px": 1.42, "blur_share": 0.0296,
               "streak": 1.1, "edges": 40, "warnings": ["blurred"]}
    clear = {**blurred, "edge_blur_px": 0.5, "blur_share": 0.0104, "warnings": []}
    for _ in range(3):
        svc.camera_check(rid, [], hole_up=False, quality=blurred)
    floor.evaluate("refresh()")
    text = floor.inner_text("#camera.camera-warn")
    assert "check the camera's focus" in text and "1.42 px" in text and f"round {rid}" in text
    surveillance.evaluate("refresh()")
    assert "check the camera's focus" in surveillance.inner_text("#camera.camera-warn")
    for _ in range(3):
        svc.camera_check(rid, [], hole_up=False, quality=clear)
    surveillance.evaluate("refresh()")
    surveillance.wait_for_selector(f"#camera >> text=Camera: clear (since round {rid})")
    assert surveillance.query_selector("#camera.camera-warn") is None
    # the round, once closed, lists both records
    svc.call(svc.table.deal, "2C")
    for code in ("7D", "9H", "5S"):
        svc.call(svc.table.deal, code)
    svc.call(svc.table.reveal, svc.actor(_login(svc, Role.DEALER)))
    rows = history_view(svc, 5)["rounds"]
    assert rows and rows[0]["id"] == rid and rows[0]["camera"] == [["blurred"], []]
    surveillance.evaluate("refresh()")
    surveillance.wait_for_selector("#history >> text=blurred → clear")


def test_surveillance_sees_whether_each_kept_frame_is_the_frame_read(site, browser, tmp_path):
    """The history row of a round lists its kept frames, each checked against the SHA-256
    recorded when it was read: "(as read)", or ALTERED / MISSING once the file is changed or
    gone (the frames directory is the site's, ``tmp_path``)."""
    import hashlib

    svc, url = site
    surveillance = sign_in(browser, url, Role.SURVEILLANCE, "surveillance")
    start_round(svc, seats=(1,))
    svc.call(svc.table.lockout)
    svc.call(svc.table.chip_count, 1, svc.actor(_login(svc, Role.DEALER)))
    rid = svc.table.current().id
    names = ["r-dealt.png", "r-revealed.png"]
    for name in names:
        (tmp_path / name).write_bytes(name.encode())
    digests = [hashlib.sha256(n.encode()).hexdigest() for n in names]
    for code in ("2C", "7D", "9H", "5S"):
        svc.call(svc.table.deal, code)
    svc.camera_check(rid, [], hole_up=False, frame_names=names[:1], frame_sha256=digests[:1])
    svc.call(svc.table.reveal, svc.actor(_login(svc, Role.DEALER)))
    svc.camera_check(rid, [], hole_up=True, frame_names=names[1:], frame_sha256=digests[1:])
    surveillance.evaluate("refresh()")
    surveillance.wait_for_selector("#history >> text=r-revealed.png")
    row = surveillance.inner_text("#history tr:nth-child(2)")
    assert row.count("(as read)") == 2
    (tmp_path / names[0]).write_bytes(b"another frame")
    (tmp_path / names[1]).unlink()
    surveillance.evaluate("refresh()")
    surveillance.wait_for_selector("#history >> text=ALTERED")
    row = surveillance.inner_text("#history tr:nth-child(2)")
    assert "r-dealt.png ALTERED" in row and "r-revealed.png MISSING" in row
    assert "(as read)" not in row


def test_surveillance_sees_a_reading_drawn_on_its_kept_frame(site, browser, tmp_path):
    """The history row links each reading's first frame to ``/frames/NAME/drawn``: the kept
    frame read again by the table's reader and drawn, each card read outlined in the read
    colour, with what the record holds (``X-Recorded``) and any recorded code the frame does
    not bear out (``X-Not-Read-Again``). Refused: without a surveillance session (403), a frame
    no reading names (404), a frame altered since it was read (409, and no link)."""
    import cv2
    import numpy as np

    from controller.camera import SimulatedCamera
    from vision import annotate as A
    from vision.recognize import load_image
    from vision.selfcheck import identity

    svc, url = site
    camera = SimulatedCamera(tmp_path, seed=4)
    svc.camera_started(identity(camera.recognizer))
    surveillance = sign_in(browser, url, Role.SURVEILLANCE, "surveillance")
    start_round(svc, seats=(1,))
    svc.call(svc.table.lockout)
    svc.call(svc.table.chip_count, 1, svc.actor(_login(svc, Role.DEALER)))
    rid = svc.table.current().id
    for code in ("9C", "JS", "4D", "5H"):  # seat 1: 9C 4D; the dealer: JS up, 5H down
        svc.call(svc.table.deal, code)
    read = camera.capture({"seat1": ["9C", "4D"], "dealer": ["JS", "XX"]}, "r-dealt")
    assert read.cards, "the frame reads some card"
    svc.camera_check(rid, read.cards, hole_up=False, frame_names=read.frame_names,
                     frame_sha256=read.frame_sha256)
    svc.call(svc.table.reveal, svc.actor(_login(svc, Role.DEALER)))
    surveillance.evaluate("refresh()")
    surveillance.wait_for_selector("#history a.drawn")
    links = surveillance.eval_on_selector_all("#history a.drawn", "as => as.map(a => a.href)")
    assert links == [f"{url}/frames/r-dealt.png/drawn"]

    answer = surveillance.goto(links[0])
    assert answer.status == 200 and answer.headers["content-type"] == "image/jpeg"
    assert answer.headers["x-not-read-again"] == ""
    recorded = answer.headers["x-recorded"].split()
    assert sorted(c for c in recorded if c != "-") == sorted(c.code for c in read.cards)
    # each recorded card's area, from its spot in the round (9C seat 1, JS dealer, 4D seat 1)
    areas = answer.headers["x-areas"].split()
    assert len(areas) == len(recorded)
    dealt = {"9C": "seat1", "JS": "dealer", "4D": "seat1"}
    assert all(dealt[code] == area for code, area in zip(recorded, areas, strict=True)
               if code != "-")
    picture = cv2.imdecode(np.frombuffer(answer.body(), np.uint8), cv2.IMREAD_COLOR)
    frame = load_image(tmp_path / "r-dealt.png")
    assert picture.shape == frame.shape
    again = camera.recognizer.recognize(frame)
    assert again["cards"]
    for card in again["cards"]:  # each card read again outlined in the read colour
        x, y = np.rint(card["corners"][0]).astype(int)
        near = picture[max(y - 3, 0):y + 4, max(x - 3, 0):x + 4].reshape(-1, 3)
        assert np.abs(near.astype(int) - A.READ).sum(-1).min() < 90

    # a later reading of the same frame recording a card it does not show is named
    svc.camera_check(rid, [CameraCard("KH", "seat1", 0.999)], hole_up=False,
                     frame_names=read.frame_names, frame_sha256=read.frame_sha256)
    with urllib.request.urlopen(urllib.request.Request(
            links[0], headers={"Cookie": surveillance.context.cookies()[0]["name"] + "="
                               + surveillance.context.cookies()[0]["value"]})) as r:
        assert r.headers["X-Not-Read-Again"] == "KH" and r.headers["X-Recorded"] == "KH"

    def status(path, cookie=True):
        jar = surveillance.context.cookies()[0]
        req = urllib.request.Request(f"{url}{path}", headers={
            "Cookie": f"{jar['name']}={jar['value']}"} if cookie else {})
        try:
            with urllib.request.urlopen(req) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    assert status("/frames/r-dealt.png/drawn", cookie=False)[0] == 403
    code, body = status("/frames/r-other.png/drawn")
    assert code == 404 and b"no camera reading" in body
    (tmp_path / "r-dealt.png").write_bytes(b"another frame")
    code, body = status("/frames/r-dealt.png/drawn")
    assert code == 409 and b"r-dealt.png is altered since it was read" in body
    surveillance.goto(f"{url}/surveillance")
    surveillance.wait_for_selector("#history >> text=ALTERED")
    assert surveillance.query_selector("#history a.drawn") is None
