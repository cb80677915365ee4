//! adbd's `sync:` service, v1 (the fake advertises no `stat_v2`/`sendrecv_v2`): `STAT`, `SEND` and
//! `RECV`, what `adb push`/`adb pull` and adb_client's `push`/`pull` speak. `RECV` carries a path and
//! is answered with `DATA` chunks and `DONE`, or `FAIL` + a message. Requests are a 4-byte id and a u32 LE length;
//! `STAT` answers mode, size and mtime (zeros for nothing there); `SEND` carries `path,mode`, then
//! `DATA` chunks (at most 64 KiB each) and `DONE` with the mtime, answered `OKAY` + 0 or `FAIL` + a
//! message. `QUIT` ends the session. Files land in the phone's `files`.

use std::io::{Read, Write};
use std::net::TcpStream;

use super::Shared;

/// adbd's limit on one `DATA` chunk.
const MAX_DATA: usize = 64 * 1024;

pub(super) fn serve(mut conn: TcpStream, s: &Shared) -> std::io::Result<()> {
    conn.write_all(b"OKAY")?;
    loop {
        let Some((id, len)) = header(&mut conn)? else {
            return Ok(());
        };
        match &id {
            b"SEND" => {
                let target = read_string(&mut conn, len)?;
                send(&mut conn, s, &target)?;
            }
            b"STAT" => {
                let path = read_string(&mut conn, len)?;
                stat(&mut conn, s, &path)?;
            }
            b"RECV" => {
                let path = read_string(&mut conn, len)?;
                recv(&mut conn, s, &path)?;
            }
            b"QUIT" => return Ok(()),
            other => {
                let what = String::from_utf8_lossy(other).into_owned();
                return fail(&mut conn, &format!("unknown sync command {what}"));
            }
        }
    }
}

fn send(conn: &mut TcpStream, s: &Shared, target: &str) -> std::io::Result<()> {
    // `path,mode`: the mode is the part after the last comma.
    let path = target.rsplit_once(',').map_or(target, |(p, _)| p).to_owned();
    let mut data = Vec::new();
    loop {
        let Some((id, len)) = header(conn)? else {
            return Ok(()); // the client hung up mid-file: nothing is written
        };
        match &id {
            b"DATA" if (len as usize) <= MAX_DATA => {
                let mut chunk = vec![0u8; len as usize];
                conn.read_exact(&mut chunk)?;
                data.extend_from_slice(&chunk);
            }
            b"DATA" => return fail(conn, "data chunk too large"),
            b"DONE" => break,
            _ => return fail(conn, "unexpected sync command inside SEND"),
        }
    }
    let mut phone = s.phone.lock().unwrap_or_else(|p| p.into_inner());
    phone.commands.push(format!("sync SEND {path}"));
    if !path.starts_with('/') {
        return fail(conn, &format!("remote path must be absolute: {path}"));
    }
    if path.starts_with("/system/") {
        return fail(conn, &format!("couldn't create file {path}: Read-only file system"));
    }
    phone.files.insert(path, data);
    conn.write_all(b"OKAY")?;
    conn.write_all(&0u32.to_le_bytes())
}

fn recv(conn: &mut TcpStream, s: &Shared, path: &str) -> std::io::Result<()> {
    let bytes = {
        let mut phone = s.phone.lock().unwrap_or_else(|p| p.into_inner());
        phone.commands.push(format!("sync RECV {path}"));
        phone.files.get(path).cloned()
    };
    let Some(bytes) = bytes else {
        return fail(conn, "No such file or directory");
    };
    for chunk in bytes.chunks(MAX_DATA) {
        conn.write_all(b"DATA")?;
        conn.write_all(&(chunk.len() as u32).to_le_bytes())?;
        conn.write_all(chunk)?;
    }
    conn.write_all(b"DONE")?;
    conn.write_all(&0u32.to_le_bytes())
}

/// `STAT`: a file the phone holds, a folder it made (or one every device has), or nothing.
fn stat(conn: &mut TcpStream, s: &Shared, path: &str) -> std::io::Result<()> {
    const DIRS: &[&str] = &["/", "/sdcard", "/data/local/tmp", "/storage/emulated/0"];
    let phone = s.phone.lock().unwrap_or_else(|p| p.into_inner());
    let trimmed = path.trim_end_matches('/');
    let (mode, size) = match phone.files.get(path) {
        Some(bytes) => (0o100_660, bytes.len() as u32),
        None if DIRS.contains(&path) || DIRS.contains(&trimmed) || phone.dirs.contains(trimmed) => (0o040_771, 4096),
        None => (0, 0),
    };
    let mtime: u32 = if mode == 0 { 0 } else { 1_700_000_000 };
    conn.write_all(b"STAT")?;
    for v in [mode, size, mtime] {
        conn.write_all(&v.to_le_bytes())?;
    }
    Ok(())
}

fn header(conn: &mut TcpStream) -> std::io::Result<Option<([u8; 4], u32)>> {
    let mut buf = [0u8; 8];
    match conn.read_exact(&mut buf) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let id = [buf[0], buf[1], buf[2], buf[3]];
    Ok(Some((id, u32::from_le_bytes([buf[4], buf[5], buf[6], buf[7]]))))
}

fn read_string(conn: &mut TcpStream, len: u32) -> std::io::Result<String> {
    if len > 4096 {
        return Err(std::io::Error::other("sync path too long"));
    }
    let mut buf = vec![0u8; len as usize];
    conn.read_exact(&mut buf)?;
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

fn fail(conn: &mut TcpStream, msg: &str) -> std::io::Result<()> {
    conn.write_all(b"FAIL")?;
    conn.write_all(&(msg.len() as u32).to_le_bytes())?;
    conn.write_all(msg.as_bytes())
}
