package dev.trailblaze;

/** The control of the JNI test: a native method that skips a required exception check. */
public final class RuleProbe {
    static native void unchecked();

    static void noop() {}

    public static void main(String[] args) {
        System.loadLibrary("jni_rule_probe");
        unchecked();
        System.out.println("probed");
    }
}
