/*
 * The control of the JNI test (tests/jni.rs): a native method that breaks a JNI rule on purpose, so
 * that the test can see -Xcheck:jni is on and its warnings are read.
 */
#include <jni.h>

/* Calls Java, then JNI again without ExceptionCheck: every HotSpot since JDK 6 warns
 * "JNI call made without checking exceptions when required to" under -Xcheck:jni. */
JNIEXPORT void JNICALL Java_dev_trailblaze_RuleProbe_unchecked(JNIEnv *env, jclass cls) {
    jmethodID noop = (*env)->GetStaticMethodID(env, cls, "noop", "()V");
    if (noop == NULL) {
        return;
    }
    (*env)->CallStaticVoidMethod(env, cls, noop);
    (*env)->NewStringUTF(env, "no ExceptionCheck before this call");
}
