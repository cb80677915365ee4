//! The file server's rules, each refusal beside a page of the same site that is served.

use std::io::{Read, Write};

use super::*;

/// A workspace: `site/` (the pages, a subfolder, a `.env`, a secrets file, a dot-folder, links out),
/// a secrets file and a file beside the site, and a file outside the workspace.
fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("ws");
    let w = |rel: &str, text: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("dirs");
        std::fs::write(p, text).expect("file");
    };
    w("site/index.html", "home");
    w("site/a b.html", "spaced");
    w("site/css/app.css", "body{}");
    w("site/.env", "TOKEN=x");
    w("site/.git/config", "[core]");
    w("site/site.secrets", "PW=x");
    w("site/Upper.SECRETS", "PW=x");
    w("ws.secrets", "PW=x");
    w("notes.txt", "beside the site");
    w("other/page.html", "another folder");
    std::fs::write(dir.path().join("outside.txt"), "no").expect("file");
    let root = std::fs::canonicalize(&root).expect("root");
    std::os::unix::fs::symlink(dir.path().join("outside.txt"), root.join("site/out.txt")).expect("link");
    std::os::unix::fs::symlink(root.join("ws.secrets"), root.join("site/pw.txt")).expect("link");
    std::os::unix::fs::symlink(root.join("site/.env"), root.join("site/env.txt")).expect("link");
    std::os::unix::fs::symlink(root.join("notes.txt"), root.join("site/notes.txt")).expect("link");
    (dir, root)
}

fn rules(root: &Path, sites: &[&str]) -> Rules {
    Rules {
        root: root.to_path_buf(),
        port: 4321,
        token: "0123abcd".into(),
        sites: Mutex::new(sites.iter().map(|s| root.join(s)).collect()),
        never: Vec::new(),
    }
}

fn get(r: &Rules, target: &str) -> Answer {
    r.answer("GET", target, &["Host: 127.0.0.1:4321".to_string()])
}

#[test]
fn a_site_folders_pages_are_served_and_nothing_private_or_outside_it() {
    let (_dir, root) = workspace();
    let r = rules(&root, &["site"]);
    // Controls: pages, a subfolder, a folder's index, an encoded name, a query.
    assert_eq!(
        get(&r, "/0123abcd/site/index.html"),
        Answer::File(root.join("site/index.html"))
    );
    assert_eq!(get(&r, "/0123abcd/site/"), Answer::File(root.join("site/index.html")));
    assert_eq!(
        get(&r, "/0123abcd/site/a%20b.html?x=1#y"),
        Answer::File(root.join("site/a b.html"))
    );
    assert_eq!(
        get(&r, "/0123abcd/site/css/app.css"),
        Answer::File(root.join("site/css/app.css"))
    );
    // Secrets files and dotfiles, in the site folder or beside it, named or encoded or linked to.
    for private in [
        "/0123abcd/site/.env",
        "/0123abcd/site/%2eenv",
        "/0123abcd/site/.git/config",
        "/0123abcd/site/site.secrets",
        "/0123abcd/site/Upper.SECRETS",
        "/0123abcd/site/pw.txt",
        "/0123abcd/site/env.txt",
        "/0123abcd/ws.secrets",
    ] {
        assert_eq!(get(&r, private), Answer::NotFound, "{private}");
    }
    // Outside the site folder: beside it, in another folder, `..`, a link out of the workspace,
    // a link to a workspace file outside the site.
    for outside in [
        "/0123abcd/notes.txt",
        "/0123abcd/other/page.html",
        "/0123abcd/site/../notes.txt",
        "/0123abcd/site/%2e%2e/notes.txt",
        "/0123abcd/../outside.txt",
        "/0123abcd/site/out.txt",
        "/0123abcd/site/notes.txt",
        "/0123abcd/",
    ] {
        assert_eq!(get(&r, outside), Answer::NotFound, "{outside}");
    }
}

#[test]
fn a_request_needs_the_servers_host_and_token() {
    let (_dir, root) = workspace();
    let r = rules(&root, &["site"]);
    let page = root.join("site/index.html");
    let with_host = |host: &str| r.answer("GET", "/0123abcd/site/index.html", &[format!("Host: {host}")]);
    // Controls: the loopback address and `localhost`, with this port.
    assert_eq!(with_host("127.0.0.1:4321"), Answer::File(page.clone()));
    assert_eq!(with_host("LocalHost:4321"), Answer::File(page.clone()));
    for host in [
        "evil.example:4321",
        "127.0.0.1:4322",
        "127.0.0.1",
        "127.0.0.2:4321",
        "",
        "[::1]:4321",
    ] {
        assert_eq!(with_host(host), Answer::Forbidden, "{host}");
    }
    assert_eq!(r.answer("GET", "/0123abcd/site/index.html", &[]), Answer::Forbidden);
    let two = ["Host: 127.0.0.1:4321".to_string(), "Host: evil.example".to_string()];
    assert_eq!(r.answer("GET", "/0123abcd/site/index.html", &two), Answer::Forbidden);
    // The token: missing, wrong, a prefix of it, longer.
    for target in [
        "/site/index.html",
        "/0123abce/site/index.html",
        "/0123abc/site/index.html",
        "/0123abcd0/site/index.html",
        "0123abcd/site/index.html",
    ] {
        assert_eq!(get(&r, target), Answer::NotFound, "{target}");
    }
    assert_eq!(
        r.answer("POST", "/0123abcd/site/index.html", &["Host: 127.0.0.1:4321".into()]),
        Answer::NotAllowed
    );
}

#[test]
fn url_of_adds_the_pages_folder_and_refuses_private_or_outside_files() {
    let (dir, root) = workspace();
    let served = Served::start(&root, &[]).expect("server");
    assert_eq!(served.rules.token.len(), 32);
    // Nothing is served before a page is opened.
    assert!(lock(&served.rules.sites).is_empty());
    let url = served.url_of(&root.join("site/a b.html")).expect("a page");
    assert_eq!(
        url,
        format!(
            "http://127.0.0.1:{}/{}/site/a%20b.html",
            served.rules.port, served.rules.token
        )
    );
    assert_eq!(*lock(&served.rules.sites), vec![root.join("site")]);
    // A page in a subfolder of a site folder adds nothing; one elsewhere adds its own folder.
    served.url_of(&root.join("site/css/app.css")).expect("in the site");
    served.url_of(&root.join("other/page.html")).expect("another site");
    assert_eq!(*lock(&served.rules.sites), vec![root.join("site"), root.join("other")]);
    assert_eq!(served.url_of(&root.join("site/.env")), Err(NotServed::Private));
    assert_eq!(served.url_of(&root.join("ws.secrets")), Err(NotServed::Private));
    assert_eq!(served.url_of(&root.join("site/.git/config")), Err(NotServed::Private));
    assert_eq!(served.url_of(&dir.path().join("outside.txt")), Err(NotServed::Outside));
    // Two servers never share a token.
    let other = Served::start(&root, &[]).expect("server");
    assert_ne!(other.rules.token, served.rules.token);
}

/// One request over TCP: the status line and the body.
fn fetch(port: u16, head: &str) -> (String, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.write_all(head.as_bytes()).expect("write");
    let mut text = String::new();
    s.read_to_string(&mut text).expect("read");
    let status = text.lines().next().unwrap_or_default().to_string();
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

#[test]
fn over_tcp_the_page_is_served_and_the_rest_refused() {
    let (_dir, root) = workspace();
    let served = Served::start(&root, &[]).expect("server");
    let url = served.url_of(&root.join("site/index.html")).expect("a page");
    let path = url
        .split_once(&format!(":{}", served.rules.port))
        .expect("port")
        .1
        .to_string();
    let host = format!("127.0.0.1:{}", served.rules.port);
    let (status, body) = fetch(
        served.rules.port,
        &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n"),
    );
    assert_eq!((status.as_str(), body.as_str()), ("HTTP/1.1 200 OK", "home"));
    let env = path.replace("index.html", ".env");
    let (status, _) = fetch(
        served.rules.port,
        &format!("GET {env} HTTP/1.1\r\nHost: {host}\r\n\r\n"),
    );
    assert_eq!(status, "HTTP/1.1 404 Not Found");
    let (status, body) = fetch(
        served.rules.port,
        &format!("GET {path} HTTP/1.1\r\nHost: rebound.example\r\n\r\n"),
    );
    assert_eq!(status, "HTTP/1.1 403 Forbidden");
    assert!(!body.contains("home"));
    let (status, _) = fetch(
        served.rules.port,
        &format!("GET /site/index.html HTTP/1.1\r\nHost: {host}\r\n\r\n"),
    );
    assert_eq!(status, "HTTP/1.1 404 Not Found");
}

/// A `--secrets` file named like any page (`site/creds.txt`) is never served, nor through a
/// symbolic or hard link, nor opened as a page; the file beside it, of the same kind, is.
#[test]
fn the_runs_secrets_file_is_never_served_whatever_its_name() {
    let (_dir, root) = workspace();
    std::fs::write(root.join("site/creds.txt"), "PW=x").expect("file");
    std::fs::write(root.join("site/plain.txt"), "text").expect("file");
    std::os::unix::fs::symlink(root.join("site/creds.txt"), root.join("site/c.txt")).expect("link");
    // A hard link is the same file under another name: no path comparison would see it.
    std::fs::hard_link(root.join("site/creds.txt"), root.join("site/hard.txt")).expect("hard link");
    // Named with a `..`, as a user may type it: compared once resolved.
    let served = Served::start(&root, &[root.join("site/../site/creds.txt")]).expect("server");
    served.url_of(&root.join("site/index.html")).expect("a page");
    let host = format!("127.0.0.1:{}", served.rules.port);
    let get = |name: &str| {
        let head = format!(
            "GET /{}/site/{name} HTTP/1.1\r\nHost: {host}\r\n\r\n",
            served.rules.token
        );
        fetch(served.rules.port, &head)
    };
    // Control: a file of the same folder and kind is served.
    assert_eq!(get("plain.txt"), ("HTTP/1.1 200 OK".into(), "text".into()));
    assert_eq!(get("creds.txt").0, "HTTP/1.1 404 Not Found");
    assert_eq!(get("c.txt").0, "HTTP/1.1 404 Not Found");
    assert_eq!(get("hard.txt").0, "HTTP/1.1 404 Not Found");
    assert_eq!(served.url_of(&root.join("site/hard.txt")), Err(NotServed::Private));
    assert_eq!(served.url_of(&root.join("site/creds.txt")), Err(NotServed::Private));
    // Control: the same server without the file listed serves it (the name alone does not refuse).
    let other = Served::start(&root, &[]).expect("server");
    other.url_of(&root.join("site/index.html")).expect("a page");
    let head = format!(
        "GET /{}/site/creds.txt HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\r\n",
        other.rules.token, other.rules.port
    );
    assert_eq!(fetch(other.rules.port, &head).0, "HTTP/1.1 200 OK");
}
