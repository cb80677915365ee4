/*
 * A control for the JNI test (tests/jni.rs): a native method that makes `n` local references and
 * never frees them, so that -Xcheck:jni's warning can be seen when local references do leak.
 */
#include <jni.h>

JNIEXPORT void JNICALL Java_dev_trailblaze_LeakProbe_leak(JNIEnv *env, jclass cls, jint n) {
    (void)cls;
    for (jint i = 0; i < n; i++) {
        (*env)->NewStringUTF(env, "leaked");
    }
}
