package dev.trailblaze;

/** Thrown by a {@link Device} when it refuses an action: the step fails, the device is fine. */
public class DeviceRefusedException extends Exception {
    private static final long serialVersionUID = 1L;

    public DeviceRefusedException(String message) {
        super(message);
    }
}
