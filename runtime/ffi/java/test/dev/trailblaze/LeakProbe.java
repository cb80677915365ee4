package dev.trailblaze;

/** The control of the JNI test: a native method that leaks local references on purpose. */
public final class LeakProbe {
    static native void leak(int n);

    public static void main(String[] args) {
        System.loadLibrary("jni_leak_probe");
        leak(Integer.parseInt(args[0]));
        System.out.println("leaked");
    }
}
