package dev.trailblaze;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The host-JVM test of the JNI layer, run by runtime/ffi/tests/jni.rs with -Xcheck:jni:
 * {@code java dev.trailblaze.JniTest <work dir> <calls>}. Prints {@code PASS <what>} per check and
 * exits non-zero on the first failure.
 */
public final class JniTest {
    static final String CANARY = "canary-7f3a-never-printed";

    public static void main(String[] args) throws Exception {
        Path work = Path.of(args[0]);
        int calls = Integer.parseInt(args[1]);
        TrailblazeNative.load();
        Path root = work.resolve("trailmaps");
        write(root.resolve("tiny/trailmap.yaml"), "id: tiny\n");
        Path greet = write(root.resolve("tiny/trails/greet.trail.yaml"), trail("Ada"));
        Path wrong = write(root.resolve("tiny/trails/wrong.trail.yaml"), trail("Bob"));
        write(root.resolve("tiny/host/greeting.host.yaml"), "id: greeting\nclass: greeting\n");
        write(root.resolve("tiny/tools/greeter.ts"), "import { trailblaze } from \"@trailblaze/scripting\";\n"
                + "/** Greets through the Java host function. */\n"
                + "export const greeter = trailblaze.tool<{ name: string }, unknown>("
                + "async (input, ctx) => (ctx.host as any).greeting({ name: input.name }));\n");
        String cache = "{\"cacheDir\": \"" + work.resolve("cache") + "\"}";
        long project = TrailblazeNative.openProject(root.toString(), cache);
        String schema = "{\"type\": \"object\", \"description\": \"Greets.\", \"properties\": "
                + "{\"name\": {\"type\": \"string\"}}, \"required\": [\"name\"], \"additionalProperties\": false}";
        int[] greetings = {0};
        TrailblazeNative.addHostFunction(project, "greeting", schema, argsJson -> {
            greetings[0]++;
            if (argsJson.contains("\"Bob\"")) throw new IllegalStateException("no greeting for Bob");
            return "{\"echo\": " + argsJson + "}";
        });
        TrailblazeException dup = expect(() -> {
            TrailblazeNative.addHostFunction(project, "greeting", schema, a -> "{}");
            return null;
        });
        check(dup.getMessage().contains("already registered"), "a name is added once: " + dup.getMessage());

        TinyApp app = new TinyApp();
        long session = TrailblazeNative.openSession(project, "tiny",
                "{\"secrets\": {\"CANARY\": \"" + CANARY + "\"}}", app);
        String report = TrailblazeNative.runTrail(session, greet.toString(), null);
        check(report.contains("\"outcome\":\"passed\""), "the trail passes on the Java device: " + report);
        check(app.screen.equals("hello") && app.name.equals("Ada"), "the Java app was driven: " + app.screen);
        check(app.snapshots > 0 && app.taps > 0, "snapshots and taps went through JNI");
        pass("trail on a Java device");

        String greeted = TrailblazeNative.call(session, "greeter", "{\"name\": \"Ada\"}");
        check(greeted.contains("\"echo\":{\"name\":\"Ada\"}"), "the Java host function answered: " + greeted);
        TrailblazeException refused = expect(() -> TrailblazeNative.call(session, "greeter", "{\"name\": \"Bob\"}"));
        check(refused.getMessage().contains("no greeting for Bob"), "its exception reaches the caller: " + refused.getMessage());
        check(greetings[0] == 2, "called twice: " + greetings[0]);
        pass("host function in Java");

        TrailblazeNative.call(session, "swipe", "{\"direction\": \"UP\"}");
        check(app.swipes == 1, "a swipe reached the Java device: " + app.swipes);
        pass("swipe on a Java device");

        // Control: the same trail expecting another name fails (the report can say failed).
        app.reset();
        String failed = TrailblazeNative.runTrail(session, wrong.toString(), null);
        check(failed.contains("\"outcome\":\"failed\""), "a wrong trail fails: " + failed);
        pass("a failing trail is reported failed");

        // A bad call: a clear Java exception, its kind, no secret value in its message.
        TrailblazeException e = expect(() -> TrailblazeNative.call(session, "inputText",
                "{\"text\": \"{{secret:CANARY}}\", \"bogus\": \"" + CANARY + "\"}"));
        check(e.kind.equals("args"), "bad arguments give kind args: " + e.kind);
        check(e.getMessage().contains("bogus"), "the message names the field: " + e.getMessage());
        check(!e.getMessage().contains(CANARY), "the message holds no secret");
        e = expect(() -> TrailblazeNative.call(session, "tapp", "{}"));
        check(e.kind.equals("unknown_tool"), "unknown tool: " + e.kind);
        e = expect(() -> TrailblazeNative.call(session, "snapshot", "{not json"));
        check(e.kind.equals("bad_input"), "invalid JSON: " + e.kind);
        e = expect(() -> TrailblazeNative.call(123456789L, "snapshot", "{}"));
        check(e.kind.equals("bad_handle"), "unknown handle: " + e.kind);
        pass("bad calls throw TrailblazeException with a kind");

        // Control: the secret does reach the device, only the device.
        app.reset();
        app.focused = true;
        TrailblazeNative.call(session, "inputText", "{\"text\": \"{{secret:CANARY}}\"}");
        check(app.typed.contains(CANARY), "the device received the secret");
        check(!TrailblazeNative.steps(session).contains(CANARY), "the steps hold the placeholder only");
        pass("secrets resolved at the device only");

        // Java exceptions from the device, mapped back: refused → failed, anything else → device.
        e = expect(() -> TrailblazeNative.call(session, "launchApp", "{\"appId\": \"com.unknown\"}"));
        check(e.kind.equals("failed") && e.getMessage().contains("no app com.unknown"), "refused: " + e.getMessage());
        e = expect(() -> TrailblazeNative.call(session, "pressKey", "{\"keyCode\": \"HOME\"}"));
        check(e.kind.equals("device") && e.getMessage().contains("cable pulled"), "device failure: " + e.getMessage());
        String ok = TrailblazeNative.call(session, "pressKey", "{\"keyCode\": \"BACK\"}");
        check(ok != null, "control: a key the app accepts works");
        pass("device exceptions mapped to kinds");

        // Many calls through JNI, each one calling back into Java: a tap, then a snapshot (the tap
        // made the session's snapshot stale, so it captures again).
        app.reset();
        int snapshotsBefore = app.snapshots;
        int tapsBefore = app.taps;
        for (int i = 0; i < calls; i++) {
            String result = i % 2 == 0
                    ? TrailblazeNative.call(session, "tapOnPoint", "{\"x\": 5, \"y\": 5}")
                    : TrailblazeNative.call(session, "snapshot", "{}");
            if (result == null || (i % 2 == 1 && !result.contains("Go"))) {
                throw new AssertionError("call " + i + " returned " + result);
            }
        }
        check(app.taps - tapsBefore == calls / 2, "every tap reached the Java device: " + (app.taps - tapsBefore));
        check(app.snapshots - snapshotsBefore >= calls / 2, "every snapshot was captured: " + (app.snapshots - snapshotsBefore));
        pass(calls + " calls");

        // A project from in-memory files, on the simulated device of its app.yaml-less trailmap:
        // opening works, a session without a device is refused clearly.
        long mem = TrailblazeNative.openProjectFiles("{\"mem/trailmap.yaml\": \"id: mem\\n\"}",
                "{\"tempDir\": \"" + work + "\"}");
        e = expect(() -> TrailblazeNative.openSession(mem, "mem", null, null));
        check(e.kind.equals("session") && e.getMessage().contains("app.yaml"), "no sim app: " + e.getMessage());
        long memSession = TrailblazeNative.openSession(mem, "mem", null, new TinyApp());
        check(TrailblazeNative.call(memSession, "snapshot", "{}").contains("Go"), "in-memory project session");
        TrailblazeNative.closeSession(memSession);
        TrailblazeNative.closeProject(mem);
        pass("project from in-memory files");

        TrailblazeNative.closeSession(session);
        e = expect(() -> { TrailblazeNative.closeSession(session); return null; });
        check(e.kind.equals("bad_handle"), "double close: " + e.kind);
        TrailblazeNative.closeProject(project);
        pass("handles closed, double close refused");
        System.out.println("ALL PASSED");
    }

    static String trail(String name) {
        return "config:\n  id: tiny/greet-" + name + "\n  target: tiny\ntrail:\n"
                + "  - step: Type the name\n    recording:\n      tools:\n"
                + "        - inputText: { text: Ada, nodeSelector: { androidAccessibility: { hintTextRegex: Name } } }\n"
                + "  - step: Press Go\n    recording:\n      tools:\n"
                + "        - tapOnElementBySelector: { nodeSelector: { androidAccessibility: { textRegex: Go } } }\n"
                + "  - verify: The greeting is shown\n    recording:\n      tools:\n"
                + "        - assertVisibleBySelector: { nodeSelector: { androidAccessibility: { textRegex: Hello " + name + " } } }\n";
    }

    interface Call {
        Object run() throws Exception;
    }

    static TrailblazeException expect(Call c) throws Exception {
        try {
            c.run();
        } catch (TrailblazeException e) {
            return e;
        }
        throw new AssertionError("expected a TrailblazeException");
    }

    static Path write(Path p, String text) throws Exception {
        Files.createDirectories(p.getParent());
        Files.writeString(p, text, StandardCharsets.UTF_8);
        return p;
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    static void pass(String what) {
        System.out.println("PASS " + what);
    }

    /** A tiny in-memory app: a name field and a Go button; Go shows "Hello <name>". */
    static final class TinyApp implements Device {
        String screen = "form";
        String name = "";
        boolean focused = false;
        int snapshots = 0;
        int taps = 0;
        int swipes = 0;
        final List<String> typed = new ArrayList<>();

        void reset() {
            screen = "form";
            name = "";
            focused = false;
            typed.clear();
        }

        static String node(String cls, String extra, int top, boolean editable, boolean focused) {
            return "{\"className\": \"" + cls + "\"" + extra + ", \"bounds\": {\"left\": 0, \"top\": " + top
                    + ", \"right\": 1080, \"bottom\": " + (top + 100) + "}, \"enabled\": true, \"clickable\": true, "
                    + "\"editable\": " + editable + ", \"focused\": " + focused + ", \"checked\": null, \"password\": false}";
        }

        @Override
        public String snapshot() {
            snapshots++;
            String children = screen.equals("form")
                    ? node("android.widget.EditText", ", \"hintText\": \"Name\", \"text\": \"" + name + "\"", 100, true, focused)
                            + ", " + node("android.widget.Button", ", \"text\": \"Go\"", 300, false, false)
                    : node("android.widget.TextView", ", \"text\": \"Hello " + name + "\"", 100, false, false);
            return "{\"appId\": \"com.tiny\", \"width\": 1080, \"height\": 1920, \"root\": {\"className\": "
                    + "\"android.widget.FrameLayout\", \"bounds\": {\"left\": 0, \"top\": 0, \"right\": 1080, \"bottom\": 1920}, "
                    + "\"enabled\": true, \"clickable\": false, \"editable\": false, \"focused\": false, \"checked\": null, "
                    + "\"password\": false, \"children\": [" + children + "]}}";
        }

        @Override
        public void swipe(int x1, int y1, int x2, int y2, int millis) {
            if (y2 >= y1) throw new IllegalArgumentException("expected an upward swipe");
            swipes++;
        }

        @Override
        public void tap(int x, int y) {
            taps++;
            if (screen.equals("form") && y >= 100 && y < 200) {
                focused = true;
            } else if (screen.equals("form") && y >= 300 && y < 400) {
                screen = "hello";
            }
        }

        @Override
        public void longPress(int x, int y) {
            tap(x, y);
        }

        @Override
        public void inputText(String text) throws DeviceRefusedException {
            if (!focused) {
                throw new DeviceRefusedException("no focused field");
            }
            typed.add(text);
            name += text;
        }

        @Override
        public void pressKey(String key) {
            if (key.equals("HOME")) {
                throw new IllegalStateException("cable pulled");
            }
        }

        @Override
        public void launchApp(String appId, String mode) throws DeviceRefusedException {
            if (!appId.equals("com.tiny")) {
                throw new DeviceRefusedException("no app " + appId);
            }
            reset();
        }

        @Override
        public byte[] screenshot() {
            return new byte[] {(byte) 0x89, 'P', 'N', 'G'};
        }
    }
}
