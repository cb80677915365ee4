"""Drives a WebDriverAgent at URL (the fake one, serving the demo app) with Appium's Python client,
as a test would drive an iPhone: a session, the page source, the window size, typing into a field
found by accessibility id, a button found by class name and clicked, a W3C touch tap, a screenshot,
and quitting. Exits non-zero, naming the step, when anything is off.

Usage: check.py URL
"""

import json
import sys
import urllib.request
import xml.etree.ElementTree as ET

from appium import webdriver
from appium.options.ios import XCUITestOptions
from appium.webdriver.common.appiumby import AppiumBy
from selenium.webdriver.common.actions import interaction
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.actions.pointer_input import PointerInput


def check(step, ok, detail=""):
    if not ok:
        sys.exit(f"wda-client check failed at {step}: {detail}")
    print(f"ok: {step}")


def touch_tap(driver, x, y):
    """A finger down and up at (x, y), as W3C pointer actions."""
    actions = ActionBuilder(driver, mouse=PointerInput(interaction.POINTER_TOUCH, "finger1"))
    actions.pointer_action.move_to_location(x, y).pointer_down().pause(0.1).release()
    actions.perform()


def main(url):
    options = XCUITestOptions()
    options.bundle_id = "com.example.demo"
    options.platform_name = "iOS"
    options.automation_name = "XCUITest"
    driver = webdriver.Remote(url, options=options)
    check("session", bool(driver.session_id), "no session id")

    source = driver.page_source
    root = ET.fromstring(source.encode("utf-8"))
    kinds = {e.tag for e in root.iter()}
    check("page source", "XCUIElementTypeButton" in kinds, f"element types: {sorted(kinds)}")

    size = driver.get_window_size()
    check("window size", size["width"] == 360 and size["height"] == 800, str(size))

    email = driver.find_element(AppiumBy.ACCESSIBILITY_ID, "email")
    email.send_keys("jane@example.com")
    check("send_keys", email.get_attribute("value") == "jane@example.com", email.get_attribute("value"))

    def sign_in():
        buttons = driver.find_elements(AppiumBy.CLASS_NAME, "XCUIElementTypeButton")
        found = [b for b in buttons if b.get_attribute("label") == "Sign in"]
        check("find Sign in", len(found) == 1, f"{len(buttons)} buttons")
        return found[0]

    sign_in().click()
    check("click", "Wrong email or password" in driver.page_source, "no error message after signing in")

    password = driver.find_element(AppiumBy.ACCESSIBILITY_ID, "password")
    r = password.rect
    touch_tap(driver, r["x"] + r["width"] / 2, r["y"] + r["height"] / 2)
    check("touch tap", password.get_attribute("focused") == "true", "the password field is not focused")
    password.send_keys("hunter2")
    sign_in().click()
    check("signed in", "Inbox" in driver.page_source, "the inbox did not open")

    png = driver.get_screenshot_as_png()
    check("screenshot", png[:8] == b"\x89PNG\r\n\x1a\n", repr(png[:8]))
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    check("screenshot size", (width, height) == (1080, 2400), f"{width}x{height}")

    driver.quit()
    with urllib.request.urlopen(f"{url}/status") as resp:
        status = json.load(resp)
    check("quit", status["sessionId"] is None, f"a session is still active: {status['sessionId']}")
    print("wda-client check passed")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
