package dev.trailblaze;

/**
 * The JNI face of libtrailblaze_ffi: handles are {@code long}s (0 is none), JSON in and out.
 * Every method throws {@link TrailblazeException} (a kind and a message that never quotes an
 * argument's value) on an error. Methods may be called from any thread; a session runs its calls
 * one at a time on its own thread, which is where {@link Device} methods are called.
 */
public final class TrailblazeNative {
    private TrailblazeNative() {}

    /** Loads {@code libtrailblaze_ffi.so} from {@code java.library.path} (an APK's jniLibs). */
    public static void load() {
        System.loadLibrary("trailblaze_ffi");
    }

    /** Opens a trailmaps folder. Options: {@code cacheDir}, {@code secrets} ({@code {"NAME": "value"}}). */
    public static native long openProject(String root, String optionsJson) throws TrailblazeException;

    /**
     * Opens a project from in-memory files ({@code {"demo/trailmap.yaml": "text", ...}}), written to
     * a private temporary folder ({@code options.tempDir}, e.g. the APK's cache dir) that lives as
     * long as the project.
     */
    public static native long openProjectFiles(String filesJson, String optionsJson) throws TrailblazeException;

    public static native void closeProject(long project) throws TrailblazeException;

    /**
     * Adds host function {@code name} for scripts' {@code ctx.host.<name>(args)} in trailmaps that
     * declare it ({@code host/<name>.host.yaml}: {@code id} and {@code class} the name).
     * {@code schemaJson} is the arguments' JSON Schema ({@code "type": "object"}; its
     * {@code description} is the function's). Call it right after opening the project, before
     * another thread uses it.
     */
    public static native void addHostFunction(long project, String name, String schemaJson, HostFunction function)
            throws TrailblazeException;

    /**
     * Opens a session of {@code trailmap}. {@code device}: null for the trailmap's simulated app.
     * Options: {@code secrets} (this session's), {@code outDir}, {@code id}.
     */
    public static native long openSession(long project, String trailmap, String optionsJson, Device device)
            throws TrailblazeException;

    /** Calls a tool; returns its result as JSON. */
    public static native String call(long session, String tool, String argsJson) throws TrailblazeException;

    /** The steps the session logged so far (JSON array; placeholders, never secret values). */
    public static native String steps(long session) throws TrailblazeException;

    /** Replays a trail file on the session's device; returns its report (JSON, {@code outcome}). */
    public static native String runTrail(long session, String path, String optionsJson) throws TrailblazeException;

    /** Runs trails on the simulated device and writes reports; options {@code out}, {@code trails}, {@code args}. */
    public static native String runTrails(long project, String optionsJson) throws TrailblazeException;

    public static native void closeSession(long session) throws TrailblazeException;
}
