/*
 * The C ABI's test program, compiled with `cc` and run (under valgrind) by tests/c_abi.rs:
 *   smoke <trailmaps dir> <project options JSON> <run out dir> <canary>
 * Opens the demo project, runs its trails on the simulated device, calls tools (good and bad), drives
 * a device made of C callbacks, and frees everything. Prints PASS lines; exits 1 on a failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trailblaze.h"

static int failures = 0;

#define CHECK(cond, what)                                                        \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "FAIL %s (line %d)\n", what, __LINE__);             \
            failures++;                                                          \
        }                                                                        \
    } while (0)

static const uint8_t *u(const char *s) { return (const uint8_t *)s; }

static int contains(const TbBuf *b, const char *needle) {
    return b->ptr != NULL && strstr((const char *)b->ptr, needle) != NULL;
}

static int count(const TbBuf *b, const char *needle) {
    int n = 0;
    const char *p = b->ptr ? (const char *)b->ptr : "";
    while ((p = strstr(p, needle)) != NULL) {
        n++;
        p += strlen(needle);
    }
    return n;
}

/* A tiny device in C: one button; a tap on it counts; launching an unknown app is refused. */
typedef struct {
    int taps;
    int dropped;
    int swipes;
    int swipe_dy;
} CApp;

static const char *TREE =
    "{\"appId\":\"com.c\",\"width\":100,\"height\":100,\"root\":{\"className\":\"android.widget.Button\","
    "\"text\":\"Press\",\"bounds\":{\"left\":0,\"top\":0,\"right\":100,\"bottom\":100},\"enabled\":true,"
    "\"clickable\":true,\"editable\":false,\"focused\":false,\"checked\":null,\"password\":false}}";

static int32_t c_swipe(void *ud, int32_t x1, int32_t y1, int32_t x2, int32_t y2, uint32_t ms, TbSink *err) {
    (void)x1; (void)x2; (void)ms; (void)err;
    CApp *a = (CApp *)ud;
    a->swipes++;
    a->swipe_dy = y2 - y1;
    return 0;
}

static int32_t c_snapshot(void *ud, TbSink *out) {
    (void)ud;
    return tb_sink_write(out, u(TREE), strlen(TREE)) == TB_STATUS_OK ? 0 : 2;
}
static int32_t c_tap(void *ud, int32_t x, int32_t y, TbSink *err) {
    (void)x; (void)y; (void)err;
    ((CApp *)ud)->taps++;
    return 0;
}
static int32_t c_text(void *ud, const uint8_t *t, size_t n, TbSink *err) {
    (void)ud; (void)t; (void)n;
    const char *m = "no focused field";
    tb_sink_write(err, u(m), strlen(m));
    return TB_DEVICE_REFUSED;
}
static int32_t c_key(void *ud, const uint8_t *k, size_t n, TbSink *err) {
    (void)ud; (void)k; (void)n; (void)err;
    return 0;
}
static int32_t c_launch(void *ud, const uint8_t *a, size_t an, const uint8_t *m, size_t mn, TbSink *err) {
    (void)ud; (void)m; (void)mn;
    if (an == 5 && memcmp(a, "com.c", 5) == 0) return 0;
    const char *msg = "unknown app";
    tb_sink_write(err, u(msg), strlen(msg));
    return TB_DEVICE_REFUSED;
}
static int32_t c_shot(void *ud, TbSink *out, int32_t *svg) {
    (void)ud;
    *svg = 0;
    return tb_sink_write(out, u("PNG"), 3) == TB_STATUS_OK ? 0 : 2;
}
static void c_drop(void *ud) { ((CApp *)ud)->dropped++; }

/* A host function in C: doubles `n`; 13 is refused with a message. */
typedef struct {
    int calls;
    int dropped;
} CHost;

static int32_t c_double(void *ud, const uint8_t *args, size_t n, TbSink *out) {
    CHost *h = (CHost *)ud;
    h->calls++;
    char buf[64];
    size_t k = n < sizeof buf - 1 ? n : sizeof buf - 1;
    memcpy(buf, args, k);
    buf[k] = 0;
    int v = 0;
    const char *refused = "thirteen is refused";
    if (sscanf(buf, "{\"n\":%d}", &v) != 1 || v == 13) {
        tb_sink_write(out, u(refused), strlen(refused));
        return 1;
    }
    char res[64];
    int len = snprintf(res, sizeof res, "{\"twice\":%d}", v * 2);
    tb_sink_write(out, u(res), (size_t)len);
    return 0;
}

static void c_host_drop(void *ud) { ((CHost *)ud)->dropped++; }

/* A trailmap in memory whose scripted tool calls the C host function. */
static const char *HOST_FILES =
    "{\"h/trailmap.yaml\": \"id: h\\n\","
    " \"h/host/double.host.yaml\": \"id: double\\nclass: double\\n\","
    " \"h/tools/twice.ts\": \"import { trailblaze } from \\\"@trailblaze/scripting\\\";\\n"
    "/** Doubles through C. */\\n"
    "export const twice = trailblaze.tool<{ n: number }, unknown>(async (input, ctx) => (ctx.host as any).double({ n: input.n }));\\n\"}";

static const char *HOST_SCHEMA =
    "{\"type\":\"object\",\"description\":\"Doubles n.\",\"properties\":{\"n\":{\"type\":\"integer\"}},"
    "\"required\":[\"n\"],\"additionalProperties\":false}";

static TbStatus call(TbSession s, const char *name, const char *args, TbBuf *out) {
    return tb_session_call(s, u(name), strlen(name), u(args), strlen(args), out);
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: smoke <trailmaps> <options> <out> <canary>\n");
        return 2;
    }
    const char *root = argv[1], *options = argv[2], *outdir = argv[3], *canary = argv[4];
    TbBuf out = {0};
    TbProject project = {0};

    TbStatus st = tb_project_open(u(root), strlen(root), u(options), strlen(options), &project, &out);
    CHECK(st == TB_STATUS_OK && project.id != 0, "open the demo project");
    if (st != TB_STATUS_OK) {
        fprintf(stderr, "%s\n", out.ptr ? (char *)out.ptr : "");
        return 1;
    }

    /* The demo's trails on the simulated device. */
    char run_opts[4096];
    snprintf(run_opts, sizeof run_opts, "{\"out\": \"%s\"}", outdir);
    TbRun run = {0};
    st = tb_run_trails(project, u(run_opts), strlen(run_opts), &run, &out);
    CHECK(st == TB_STATUS_OK && run.id != 0, "run the demo trails");
    st = tb_run_report(run, &out);
    CHECK(st == TB_STATUS_OK, "read the run's report");
    /* The demo's three sim trails pass; the web demo's three are skipped on the sim (their config says so). */
    CHECK(contains(&out, "\"passed\":3,") && contains(&out, "\"total\":6,") && contains(&out, "\"skipped\":3,"),
          "the three demo trails pass");
    CHECK(contains(&out, "\"failed\":0,"), "no trail failed");
    const char *summary = out.ptr ? strstr((const char *)out.ptr, "\"summary\"") : NULL;
    printf("run: %d passed steps; %.100s\n", count(&out, "{\"status\":\"passed\"}"), summary ? summary : "(no summary)");
    CHECK(tb_run_free(run) == TB_STATUS_OK, "free the run");
    CHECK(tb_run_free(run) == TB_STATUS_BAD_HANDLE, "a second free is refused");

    /* A session on the sim with this session's own secret. */
    char sess_opts[512];
    snprintf(sess_opts, sizeof sess_opts, "{\"secrets\": {\"CANARY\": \"%s\"}}", canary);
    TbSession session = {0};
    st = tb_session_open(project, u("demo"), 4, u(sess_opts), strlen(sess_opts), NULL, &session, &out);
    CHECK(st == TB_STATUS_OK, "open a session on the sim");

    st = call(session, "snapshot", "", &out);
    CHECK(st == TB_STATUS_OK && contains(&out, "{"), "control: a good call returns JSON");

    char bad[512];
    snprintf(bad, sizeof bad, "{\"text\": \"{{secret:CANARY}}\", \"bogus\": \"%s\"}", canary);
    st = call(session, "inputText", bad, &out);
    CHECK(st == TB_STATUS_ARGS, "bad arguments: kind args");
    CHECK(contains(&out, "bogus"), "the message names the field");
    CHECK(!contains(&out, canary), "the message holds no secret value");
    printf("PASS bad call: %s\n", out.ptr ? (char *)out.ptr : "(none)");

    st = call(session, "tapp", "{}", &out);
    CHECK(st == TB_STATUS_UNKNOWN_TOOL, "unknown tool");
    st = call(session, "snapshot", "{nope", &out);
    CHECK(st == TB_STATUS_BAD_INPUT, "invalid JSON");
    st = tb_session_call(session, u("\xff\xfe"), 2, u("{}"), 2, &out);
    CHECK(st == TB_STATUS_BAD_INPUT, "a name that is not UTF-8");
    st = tb_session_call(session, NULL, 3, u("{}"), 2, &out);
    CHECK(st == TB_STATUS_BAD_INPUT, "a null name");
    st = call(session, "snapshot", "{}", NULL);
    CHECK(st == TB_STATUS_OK, "a null out buffer is allowed");
    st = tb_session_steps(session, &out);
    CHECK(st == TB_STATUS_OK && contains(&out, "snapshot") && !contains(&out, canary), "steps, no secret");
    printf("PASS errors as values\n");

    /* A device made of C callbacks. */
    CApp app = {0, 0, 0, 0};
    TbDevice dev = {&app, c_snapshot, c_tap, c_tap, c_text, c_key, c_launch, c_shot, c_drop, NULL};
    TbSession cs = {0};
    st = tb_session_open(project, u("demo"), 4, NULL, 0, &dev, &cs, &out);
    CHECK(st == TB_STATUS_OK, "open a session on the C device");
    st = call(cs, "tapOnElementBySelector", "{\"nodeSelector\": {\"androidAccessibility\": {\"textRegex\": \"Press\"}}}", &out);
    CHECK(st == TB_STATUS_OK && app.taps == 1, "a tap reached the C device");
    st = call(cs, "launchApp", "{\"appId\": \"com.other\"}", &out);
    CHECK(st == TB_STATUS_FAILED && contains(&out, "unknown app"), "a refused action is a failed call");
    st = call(cs, "launchApp", "{\"appId\": \"com.c\"}", &out);
    CHECK(st == TB_STATUS_OK, "control: a known app launches");
    st = call(cs, "swipe", "{\"direction\": \"UP\"}", &out);
    CHECK(st == TB_STATUS_FAILED && contains(&out, "cannot swipe"), "no swipe callback: a refused swipe");
    CHECK(tb_session_free(cs) == TB_STATUS_OK && app.dropped == 1, "the device is dropped once");
    TbDevice partial = dev;
    partial.tap = NULL;
    st = tb_session_open(project, u("demo"), 4, NULL, 0, &partial, &cs, &out);
    CHECK(st == TB_STATUS_BAD_INPUT && contains(&out, "tap") && app.dropped == 2, "a missing callback");
    printf("PASS C device\n");

    /* Host functions in C, on a project opened from in-memory files. */
    CHost host = {0, 0};
    TbProject hp = {0};
    st = tb_project_open_files(u(HOST_FILES), strlen(HOST_FILES), u(options), strlen(options), &hp, &out);
    CHECK(st == TB_STATUS_OK, "open a project from in-memory files");
    TbHostFunction hf = {&host, c_double, c_host_drop};
    st = tb_project_add_host_function(hp, u("double"), 6, u(HOST_SCHEMA), strlen(HOST_SCHEMA), &hf, &out);
    CHECK(st == TB_STATUS_OK, "add a host function");
    st = tb_project_add_host_function(hp, u("double"), 6, u(HOST_SCHEMA), strlen(HOST_SCHEMA), &hf, &out);
    CHECK(st == TB_STATUS_SESSION && contains(&out, "already") && host.dropped == 1, "a second `double` is refused and dropped");
    TbHostFunction nocall = {&host, NULL, c_host_drop};
    st = tb_project_add_host_function(hp, u("other"), 5, u(HOST_SCHEMA), strlen(HOST_SCHEMA), &nocall, &out);
    CHECK(st == TB_STATUS_BAD_INPUT && host.dropped == 2, "a table without `call` is refused and dropped");
    CApp happ = {0, 0, 0, 0};
    TbDevice hdev = {&happ, c_snapshot, c_tap, c_tap, c_text, c_key, c_launch, c_shot, c_drop, c_swipe};
    TbSession hs = {0};
    st = tb_session_open(hp, u("h"), 1, NULL, 0, &hdev, &hs, &out);
    CHECK(st == TB_STATUS_OK, "open a session on the in-memory trailmap");
    st = call(hs, "swipe", "{\"direction\": \"UP\"}", &out);
    CHECK(st == TB_STATUS_OK && happ.swipes == 1 && happ.swipe_dy == -20, "a swipe reached the C device");
    st = call(hs, "twice", "{\"n\": 21}", &out);
    CHECK(st == TB_STATUS_OK && contains(&out, "\"twice\":42") && host.calls == 1, "a script called the C host function");
    st = call(hs, "twice", "{\"n\": 13}", &out);
    CHECK(st != TB_STATUS_OK && contains(&out, "thirteen is refused"), "its error reaches the caller");
    st = call(hs, "twice", "{\"n\": 1.5}", &out);
    CHECK(st != TB_STATUS_OK && host.calls == 2, "arguments its schema refuses never reach it");
    CHECK(tb_session_free(hs) == TB_STATUS_OK && tb_project_free(hp) == TB_STATUS_OK, "free them");
    CHECK(host.dropped == 3, "the host function is dropped once, with its project");
    printf("PASS C host function\n");

    /* Frees: double frees and null handles are errors, not crashes. */
    CHECK(tb_session_free(session) == TB_STATUS_OK, "free the session");
    CHECK(tb_session_free(session) == TB_STATUS_BAD_HANDLE, "double free of a session");
    TbSession none = {0};
    CHECK(tb_session_free(none) == TB_STATUS_BAD_HANDLE, "null session");
    st = call(session, "snapshot", "{}", &out);
    CHECK(st == TB_STATUS_BAD_HANDLE, "a freed session is refused");
    CHECK(tb_project_free(project) == TB_STATUS_OK, "free the project");
    CHECK(tb_project_free(project) == TB_STATUS_BAD_HANDLE, "double free of a project");
    tb_buf_free(&out);
    tb_buf_free(&out);
    tb_buf_free(NULL);
    printf("PASS frees\n");

    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("ALL PASSED\n");
    return 0;
}
