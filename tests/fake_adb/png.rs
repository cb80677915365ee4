//! A valid PNG of the screen for `screencap -p`: 1 bit per pixel, white with each node's outline in
//! black, deflate "stored" blocks (no compressor needed), real CRCs and Adler-32.

use trailblaze::device::{ViewNode, ViewTree};

pub fn render(tree: &ViewTree) -> Vec<u8> {
    let (w, h) = (tree.width.max(1) as usize, tree.height.max(1) as usize);
    let stride = w.div_ceil(8);
    // Row = filter byte 0 + packed bits; palette index 1 (white) everywhere to start.
    let mut raw = vec![0u8; (stride + 1) * h];
    for row in raw.chunks_mut(stride + 1) {
        row[1..].fill(0xff);
    }
    outline(&tree.root, &mut raw, w, h, stride);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&(w as u32).to_be_bytes());
    ihdr.extend_from_slice(&(h as u32).to_be_bytes());
    ihdr.extend_from_slice(&[1, 3, 0, 0, 0]); // bit depth 1, palette, deflate, filter 0, no interlace
    chunk(&mut png, b"IHDR", &ihdr);
    chunk(&mut png, b"PLTE", &[0, 0, 0, 255, 255, 255]);
    chunk(&mut png, b"IDAT", &zlib_stored(&raw));
    chunk(&mut png, b"IEND", &[]);
    png
}

fn outline(n: &ViewNode, raw: &mut [u8], w: usize, h: usize, stride: usize) {
    let b = n.bounds;
    let mut black = |x: i32, y: i32| {
        if x >= 0 && y >= 0 && (x as usize) < w && (y as usize) < h {
            let i = y as usize * (stride + 1) + 1 + x as usize / 8;
            raw[i] &= !(0x80u8 >> (x as usize % 8));
        }
    };
    for x in b.left..b.right {
        black(x, b.top);
        black(x, b.bottom - 1);
    }
    for y in b.top..b.bottom {
        black(b.left, y);
        black(b.right - 1, y);
    }
    for c in &n.children {
        outline(c, raw, w, h, stride);
    }
}

fn chunk(png: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    png.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = png.len();
    png.extend_from_slice(kind);
    png.extend_from_slice(data);
    let crc = crc32(&png[start..]);
    png.extend_from_slice(&crc.to_be_bytes());
}

fn zlib_stored(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = data.chunks(65535).collect();
    for (i, block) in blocks.iter().enumerate() {
        out.push(u8::from(i + 1 == blocks.len()));
        let len = block.len() as u16;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(block);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in data {
        a = (a + u32::from(byte)) % 65521;
        b = (b + a) % 65521;
    }
    out.extend_from_slice(&((b << 16) | a).to_be_bytes());
    out
}

pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}
