//! A decoded PNG the tests read pixels of (the vision tests' pictures, the web tests' screenshots).

/// A decoded PNG: width, height, RGBA rows.
pub(crate) struct Png {
    pub(crate) width: u32,
    pub(crate) height: u32,
    rgba: Vec<u8>,
}

impl Png {
    /// Decodes `bytes`, expanded to RGBA whatever the file's colour type.
    pub(crate) fn decode(bytes: &[u8]) -> Png {
        let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::ALPHA);
        let mut reader = decoder.read_info().expect("a PNG");
        let mut buf = vec![0; reader.output_buffer_size().expect("a size")];
        let info = reader.next_frame(&mut buf).expect("a frame");
        assert_eq!(info.color_type, png::ColorType::Rgba, "RGBA after expansion");
        buf.truncate(info.buffer_size());
        Png {
            width: info.width,
            height: info.height,
            rgba: buf,
        }
    }

    /// The pixel at (`x`, `y`).
    pub(crate) fn px(&self, x: u32, y: u32) -> [u8; 4] {
        let i = ((y * self.width + x) * 4) as usize;
        [self.rgba[i], self.rgba[i + 1], self.rgba[i + 2], self.rgba[i + 3]]
    }
}
