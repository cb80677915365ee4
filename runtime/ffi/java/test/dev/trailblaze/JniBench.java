package dev.trailblaze;

import java.util.Arrays;

/**
 * The JNI half of benches/ffi_call.rs: {@code java dev.trailblaze.JniBench <trailmaps> <options> <calls> <repeats>}
 * prints {@code jni_median_ns=<ns per call>} for {@code snapshot} on the demo's simulated device.
 */
public final class JniBench {
    public static void main(String[] args) throws Exception {
        TrailblazeNative.load();
        int calls = Integer.parseInt(args[2]);
        int repeats = Integer.parseInt(args[3]);
        long project = TrailblazeNative.openProject(args[0], args[1]);
        long session = TrailblazeNative.openSession(project, "demo", null, null);
        for (int i = 0; i < calls; i++) {
            TrailblazeNative.call(session, "snapshot", "{}"); // warm-up
        }
        double[] perCall = new double[repeats];
        for (int r = 0; r < repeats; r++) {
            long t = System.nanoTime();
            for (int i = 0; i < calls; i++) {
                TrailblazeNative.call(session, "snapshot", "{}");
            }
            perCall[r] = (System.nanoTime() - t) / (double) calls;
        }
        Arrays.sort(perCall);
        TrailblazeNative.closeSession(session);
        TrailblazeNative.closeProject(project);
        System.out.println("jni_median_ns=" + perCall[repeats / 2]);
    }
}
