package dev.trailblaze;

/**
 * A host function implemented in Java, added with {@link TrailblazeNative#addHostFunction}: scripts
 * call it as {@code ctx.host.<name>(args)}. Called on a session's thread, possibly on two at once
 * when two sessions call: make it thread-safe.
 */
public interface HostFunction {
    /**
     * Gets the arguments as JSON, already checked against the schema it was added with; returns the
     * result as JSON. An exception fails the call: its {@code toString()} reaches the script as its
     * {@code TrailblazeHostError}. The arguments may hold a resolved secret: do not log them.
     */
    String call(String argsJson) throws Exception;
}
