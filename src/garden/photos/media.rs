//! The image work of diary photos, without I/O: recognising the format from the bytes,
//! checking dimensions before decoding (a decompression bomb is refused from its header),
//! decoding under the `image` crate's limits, stripping metadata from originals without
//! re-encoding them, and making the WebP renditions.

use std::io::Cursor;

use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader, imageops::FilterType};
use img_parts::{Bytes, ImageEXIF};

/// The upload types, as the 415 answer names them.
pub const ACCEPTED_TYPES: &str = "image/jpeg, image/png, image/webp";
/// Rendition sizes (longest edge in px), ascending.
pub const RENDITION_SIZES: [u32; 2] = [512, 1280];
/// WebP quality of the renditions (libwebp's 0-100 scale).
pub const WEBP_QUALITY: f32 = 80.0;

pub use crate::store::photos::Format;

impl Format {
    fn image_format(self) -> ImageFormat {
        match self {
            Self::Jpeg => ImageFormat::Jpeg,
            Self::Png => ImageFormat::Png,
            Self::WebP => ImageFormat::WebP,
        }
    }
}

/// The format the bytes are, from their signature.
pub fn sniff(bytes: &[u8]) -> Option<Format> {
    if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some(Format::Jpeg)
    } else if bytes.starts_with(&[0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A]) {
        Some(Format::Png)
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some(Format::WebP)
    } else {
        None
    }
}

/// Pictures above this many pixels must also pass the pixels-per-byte check: below it a
/// decode costs at most 16 MB, so a tiny flat PNG (a screenshot of a white page) stays welcome.
pub const DENSITY_CHECK_MIN_PIXELS: u64 = 4_000_000;

/// How large a photo may be, in pixels, and how many pixels its file may promise per byte.
#[derive(Debug, Clone, Copy)]
pub struct PixelLimits {
    pub max_pixels: u64,
    pub max_edge: u32,
    /// Phone JPEGs carry 3 to 10 pixels per byte, PNG screenshots up to about 50; a 7000 x
    /// 7000 PNG of 186 KB (the decompression bomb that exhausted memory) 263.
    pub max_pixels_per_byte: u32,
}

impl PixelLimits {
    pub fn from_megapixels(megapixels: u32) -> Self {
        Self {
            max_pixels: u64::from(megapixels) * 1_000_000,
            // A panorama may be long, but no side beyond the decoders' comfortable range.
            max_edge: 30_000,
            max_pixels_per_byte: 100,
        }
    }

    /// `PHOTO_MAX_MEGAPIXELS` and `PHOTO_MAX_PIXELS_PER_BYTE`.
    pub fn from_config(config: &crate::config::Config) -> Self {
        Self {
            max_pixels_per_byte: config.photo_max_pixels_per_byte,
            ..Self::from_megapixels(config.photo_max_megapixels)
        }
    }

    fn decoder_limits(self) -> image::Limits {
        let mut limits = image::Limits::default();
        limits.max_image_width = Some(self.max_edge);
        limits.max_image_height = Some(self.max_edge);
        // RGBA at 8 bit plus the decoders' working buffers.
        limits.max_alloc = Some(self.max_pixels.saturating_mul(4) + 64 * 1024 * 1024);
        limits
    }
}

/// Why an upload is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// The bytes carry none of the accepted signatures (HEIC, GIF, text …).
    NotAnImage,
    /// Declared one type, sent another.
    Mismatch { declared: Format, found: Format },
    /// The header names more pixels than allowed (checked before decoding).
    TooManyPixels { width: u32, height: u32 },
    /// Far more pixels than the file's size lets a photo have: a decompression bomb
    /// (checked before decoding).
    TooCompressed {
        width: u32,
        height: u32,
        bytes: usize,
    },
    /// Recognised, but it does not decode (truncated, corrupt).
    Undecodable(String),
}

/// A photo that passed every check, decoded (orientation applied).
pub struct Checked {
    pub format: Format,
    pub width: u32,
    pub height: u32,
}

/// The header dimensions of `bytes` (nothing is decoded).
pub fn dimensions(bytes: &[u8], format: Format) -> Result<(u32, u32), Rejection> {
    ImageReader::with_format(Cursor::new(bytes), format.image_format())
        .into_dimensions()
        .map_err(|e| Rejection::Undecodable(e.to_string()))
}

/// What the header promises, checked against the limits before anything is decoded: the
/// dimensions, and (above [`DENSITY_CHECK_MIN_PIXELS`]) the pixels per byte of file.
pub fn admit(bytes: &[u8], format: Format, limits: PixelLimits) -> Result<(u32, u32), Rejection> {
    let (w, h) = dimensions(bytes, format)?;
    let pixels = u64::from(w) * u64::from(h);
    if w == 0 || h == 0 || w > limits.max_edge || h > limits.max_edge || pixels > limits.max_pixels
    {
        return Err(Rejection::TooManyPixels {
            width: w,
            height: h,
        });
    }
    if pixels > DENSITY_CHECK_MIN_PIXELS
        && pixels > (bytes.len() as u64).saturating_mul(u64::from(limits.max_pixels_per_byte))
    {
        return Err(Rejection::TooCompressed {
            width: w,
            height: h,
            bytes: bytes.len(),
        });
    }
    Ok((w, h))
}

/// What an upload can be refused for without decoding it: its signature against the declared
/// type, and its header against the limits ([`admit`]). Cheap: the header only.
pub fn screen(bytes: &[u8], declared: Format, limits: PixelLimits) -> Result<Format, Rejection> {
    let found = sniff(bytes).ok_or(Rejection::NotAnImage)?;
    if found != declared {
        return Err(Rejection::Mismatch { declared, found });
    }
    admit(bytes, found, limits)?;
    Ok(found)
}

/// Checks an upload: [`screen`], then a full decode under the decoder limits (a truncated or
/// corrupt file fails here), and for JPEG the container structure up to its end marker.
pub fn check(bytes: &[u8], declared: Format, limits: PixelLimits) -> Result<Checked, Rejection> {
    let found = screen(bytes, declared, limits)?;
    if found == Format::Jpeg {
        // The JPEG decoder fills a cut-off scan with grey; the container walk finds the cut.
        strip_jpeg(bytes).map_err(Rejection::Undecodable)?;
    }
    let image = decode(bytes, found, limits).map_err(Rejection::Undecodable)?;
    Ok(Checked {
        format: found,
        width: image.width(),
        height: image.height(),
    })
}

/// Decodes under the limits and turns the picture upright (its EXIF orientation applied:
/// the renditions carry no EXIF, so they must not need it).
pub fn decode(bytes: &[u8], format: Format, limits: PixelLimits) -> Result<DynamicImage, String> {
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format.image_format());
    reader.limits(limits.decoder_limits());
    let mut decoder = reader.into_decoder().map_err(|e| e.to_string())?;
    let orientation = decoder.orientation().map_err(|e| e.to_string())?;
    let mut image = DynamicImage::from_decoder(decoder).map_err(|e| e.to_string())?;
    image.apply_orientation(orientation);
    Ok(image)
}

/// The size of a rendition of a `w`×`h` picture: the longest edge becomes `edge`, the aspect
/// ratio is kept; a picture already smaller keeps its size (never upscaled).
pub fn fit(w: u32, h: u32, edge: u32) -> (u32, u32) {
    let longest = w.max(h);
    if longest <= edge {
        return (w, h);
    }
    let scale = f64::from(edge) / f64::from(longest);
    let scaled = |v: u32| ((f64::from(v) * scale).round() as u32).max(1);
    if w >= h {
        (edge, scaled(h))
    } else {
        (scaled(w), edge)
    }
}

/// The renditions of a decoded picture, one per [`RENDITION_SIZES`] entry: lossy WebP from raw
/// pixels (so no metadata of the original can reach them). The larger one is made from the
/// original, the smaller from the larger. Takes the picture whole, so the full-size pixels are
/// freed as soon as the larger rendition exists (no second copy of them).
pub fn render(image: DynamicImage) -> Result<Vec<(u32, Vec<u8>)>, String> {
    let mut out = Vec::with_capacity(RENDITION_SIZES.len());
    let mut source = image;
    for &edge in RENDITION_SIZES.iter().rev() {
        let (w, h) = fit(source.width(), source.height(), edge);
        if (w, h) != (source.width(), source.height()) {
            source = source.resize_exact(w, h, FilterType::Triangle);
        }
        out.push((edge, encode_webp(&source)?));
    }
    out.reverse();
    Ok(out)
}

fn encode_webp(image: &DynamicImage) -> Result<Vec<u8>, String> {
    let (w, h) = (image.width(), image.height());
    let encoded = if image.color().has_alpha() {
        let rgba = image.to_rgba8();
        webp::Encoder::from_rgba(rgba.as_raw(), w, h).encode(WEBP_QUALITY)
    } else {
        let rgb = image.to_rgb8();
        webp::Encoder::from_rgb(rgb.as_raw(), w, h).encode(WEBP_QUALITY)
    };
    if encoded.is_empty() {
        return Err("the WebP encoder produced nothing".into());
    }
    Ok(encoded.to_vec())
}

/// The original without its metadata (EXIF, XMP, IPTC, comments, text chunks; GPS lives
/// there), the image data untouched. ICC colour profiles stay.
pub fn strip_metadata(bytes: &[u8], format: Format) -> Result<Vec<u8>, String> {
    match format {
        Format::Jpeg => strip_jpeg(bytes),
        Format::Png => {
            let mut png = img_parts::png::Png::from_bytes(Bytes::copy_from_slice(bytes))
                .map_err(|e| e.to_string())?;
            for kind in [*b"eXIf", *b"tEXt", *b"zTXt", *b"iTXt", *b"tIME"] {
                png.remove_chunks_by_type(kind);
            }
            Ok(png.encoder().bytes().to_vec())
        }
        Format::WebP => {
            let mut webp = img_parts::webp::WebP::from_bytes(Bytes::copy_from_slice(bytes))
                .map_err(|e| e.to_string())?;
            webp.remove_chunks_by_id(img_parts::webp::CHUNK_XMP);
            // Also rewrites the VP8X flags to what is left.
            webp.set_exif(None);
            Ok(webp.encoder().bytes().to_vec())
        }
    }
}

/// Walks a JPEG's segments up to its end marker and writes it again without APP1 (EXIF, XMP),
/// APP13 (IPTC), the MPF index in APP2, comments, and anything after the end marker (the
/// further images of a multi-picture file carry their own EXIF). A file that ends before its
/// end marker is truncated: an error.
pub fn strip_jpeg(bytes: &[u8]) -> Result<Vec<u8>, String> {
    const TRUNCATED: &str = "the JPEG ends before its end marker (truncated)";
    if !bytes.starts_with(&[0xFF, 0xD8]) {
        return Err("not a JPEG".into());
    }
    let mut out = Vec::with_capacity(bytes.len());
    out.extend_from_slice(&[0xFF, 0xD8]);
    let mut i = 2;
    loop {
        // A marker: 0xFF (fill bytes allowed), then its code.
        if bytes.get(i) != Some(&0xFF) {
            return Err(format!("a JPEG segment is malformed at byte {i}"));
        }
        while bytes.get(i) == Some(&0xFF) {
            i += 1;
        }
        let marker = *bytes.get(i).ok_or(TRUNCATED)?;
        i += 1;
        match marker {
            0xD9 => {
                out.extend_from_slice(&[0xFF, 0xD9]);
                return Ok(out);
            }
            0x01 | 0xD0..=0xD7 => {
                out.extend_from_slice(&[0xFF, marker]);
                continue;
            }
            _ => {}
        }
        let len_bytes = bytes.get(i..i + 2).ok_or(TRUNCATED)?;
        let len = usize::from(u16::from_be_bytes([len_bytes[0], len_bytes[1]]));
        if len < 2 {
            return Err(format!("a JPEG segment length is invalid at byte {i}"));
        }
        let end = i + len;
        let data = bytes.get(i + 2..end).ok_or(TRUNCATED)?;
        let drop = match marker {
            0xE1 | 0xED | 0xFE => true,
            0xE2 => data.starts_with(b"MPF\0"),
            _ => false,
        };
        if !drop {
            out.extend_from_slice(&[0xFF, marker]);
            out.extend_from_slice(&bytes[i..end]);
        }
        i = end;
        if marker == 0xDA {
            // Entropy-coded data: runs until a 0xFF that is neither stuffed (0x00) nor a
            // restart marker.
            let start = i;
            loop {
                let b = *bytes.get(i).ok_or(TRUNCATED)?;
                if b == 0xFF {
                    let next = *bytes.get(i + 1).ok_or(TRUNCATED)?;
                    if next != 0x00 && !(0xD0..=0xD7).contains(&next) && next != 0xFF {
                        break;
                    }
                    if next == 0xFF {
                        // Fill bytes before a marker.
                        let mut j = i + 1;
                        while bytes.get(j) == Some(&0xFF) {
                            j += 1;
                        }
                        let code = *bytes.get(j).ok_or(TRUNCATED)?;
                        if code != 0x00 && !(0xD0..=0xD7).contains(&code) {
                            break;
                        }
                    }
                    i += 2;
                } else {
                    i += 1;
                }
            }
            out.extend_from_slice(&bytes[start..i]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renditions_fit_the_longest_edge_and_never_upscale() {
        assert_eq!(fit(4000, 3000, 1280), (1280, 960));
        assert_eq!(fit(3000, 4000, 512), (384, 512));
        assert_eq!(fit(800, 600, 1280), (800, 600));
        assert_eq!(fit(512, 512, 512), (512, 512));
        assert_eq!(fit(10_000, 3, 512), (512, 1));
    }

    #[test]
    fn signatures_decide_the_format() {
        assert_eq!(sniff(&[0xFF, 0xD8, 0xFF, 0xE0]), Some(Format::Jpeg));
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n...."), Some(Format::Png));
        assert_eq!(sniff(b"RIFF\0\0\0\0WEBPVP8 "), Some(Format::WebP));
        assert_eq!(sniff(b"\0\0\0\x18ftypheic"), None);
        assert_eq!(sniff(b"hello"), None);
        assert_eq!(sniff(b""), None);
    }

    /// A `w`×`h` RGB PNG of one colour: a few hundred bytes per megapixel.
    /// One colour, at zlib's usual level (as most tools write PNGs; the encoder's fastest
    /// default leaves a flat picture ten times larger).
    fn flat_png(w: u32, h: u32) -> Vec<u8> {
        let mut out = Vec::new();
        let encoder = image::codecs::png::PngEncoder::new_with_quality(
            &mut out,
            image::codecs::png::CompressionType::Default,
            image::codecs::png::FilterType::NoFilter,
        );
        DynamicImage::ImageRgb8(image::RgbImage::new(w, h))
            .write_with_encoder(encoder)
            .expect("encode");
        out
    }

    #[test]
    fn flat_pictures_pass_below_the_floor_and_bombs_above_it_are_refused() {
        let limits = PixelLimits::from_megapixels(50);
        // 1 MP of one colour: thousands of pixels per byte, but harmless to decode.
        let small = flat_png(1000, 1000);
        assert!(1_000_000 / small.len() > 100);
        assert_eq!(admit(&small, Format::Png, limits), Ok((1000, 1000)));
        // 2500 x 2000 (5 MP) of one colour: over the floor and far over 100 px/byte.
        let bomb = flat_png(2500, 2000);
        assert_eq!(
            admit(&bomb, Format::Png, limits),
            Err(Rejection::TooCompressed {
                width: 2500,
                height: 2000,
                bytes: bomb.len()
            })
        );
        // The same picture with a generous ratio passes.
        let lenient = PixelLimits {
            max_pixels_per_byte: 1_000_000,
            ..limits
        };
        assert!(admit(&bomb, Format::Png, lenient).is_ok());
    }

    #[test]
    fn a_jpeg_without_its_end_marker_is_truncated() {
        // SOI, a tiny APP0, SOS header, two entropy bytes, no EOI.
        let mut jpeg = vec![0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x00, 0x00];
        jpeg.extend_from_slice(&[0xFF, 0xDA, 0x00, 0x02, 0x12, 0x34]);
        assert!(strip_jpeg(&jpeg).is_err());
        jpeg.extend_from_slice(&[0xFF, 0xD9, 0xAA, 0xBB]);
        let stripped = strip_jpeg(&jpeg).expect("complete");
        assert!(
            stripped.ends_with(&[0x12, 0x34, 0xFF, 0xD9]),
            "trailer dropped"
        );
    }
}
