package dev.trailblaze;

/**
 * A device implemented in Java (on a phone: UiAutomation inside the test APK). Called on the
 * session's thread, one method at a time. Throw {@link DeviceRefusedException} when the action is
 * refused (a failed step); any other exception means the device itself failed.
 */
public interface Device {
    /** The view tree as JSON: {@code {"appId", "width", "height", "root": {"className", "bounds", ...}}}. */
    String snapshot() throws Exception;

    void tap(int x, int y) throws Exception;

    void longPress(int x, int y) throws Exception;

    /** Drags from (x1, y1) to (x2, y2) over {@code millis} ms. A device that cannot swipe refuses. */
    default void swipe(int x1, int y1, int x2, int y2, int millis) throws Exception {
        throw new DeviceRefusedException("this device cannot swipe");
    }

    /** Types into the focused field. The text may be a resolved secret: never log it. */
    void inputText(String text) throws Exception;

    /** {@code BACK}, {@code ENTER}, {@code HOME}, {@code BACKSPACE}, {@code TAB} or {@code ESCAPE}. */
    void pressKey(String key) throws Exception;

    /** {@code mode}: {@code REINSTALL}, {@code FORCE_RESTART} or {@code RESUME}. */
    void launchApp(String appId, String mode) throws Exception;

    /** PNG bytes for reports. */
    byte[] screenshot() throws Exception;
}
