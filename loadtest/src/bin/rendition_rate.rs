//! Photo renditions per second per core: the work one rendition job does in the service
//! (`kultiva::garden::photos::media`: decode a JPEG under the decoder limits, turn it upright,
//! resize to 1280 px and from that to 512 px, encode both as lossy WebP), and the check an
//! upload does on the request path (signature, header dimensions, container walk, full decode,
//! EXIF stripping), over synthetic camera-sized JPEGs made at start (quality 90, textured so
//! the codecs have work). No database, no storage: the CPU ceiling of the rendition workers.
//!
//! Usage: `rendition_rate [SECONDS] [THREADS] [MEGAPIXELS]` (defaults: 20, the number of cores,
//! 12). Prints one JSON object, e.g.
//! `{"threads":2,"megapixels":12.0,"seconds":20.0,"renditions":84,"per_second":4.2,
//!   "per_second_per_core":2.1,"ms_per_image":476.2,"check_ms_per_image":150.3,
//!   "jpeg_bytes":3400000,"webp_512_bytes":41000,"webp_1280_bytes":190000}`.

use std::io::Cursor;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use image::{DynamicImage, RgbImage};
use kultiva::garden::photos::media::{self, Format, PixelLimits};

/// A textured picture: gradients, a fine pattern and some noise (a photo compresses to a few
/// MB at quality 90; a flat picture would flatter the decoder).
fn picture(w: u32, h: u32, seed: u32) -> DynamicImage {
    let mut s = seed.wrapping_mul(2_654_435_761).max(1);
    DynamicImage::ImageRgb8(RgbImage::from_fn(w, h, |x, y| {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        let n = s & 0x1F;
        let r = (x * 200 / w + n) as u8;
        let g = (y * 200 / h + ((x / 7 + y / 5) % 40)) as u8;
        let b = (((x ^ y) & 0x3F) + n * 2) as u8;
        image::Rgb([r, g, b])
    }))
}

fn jpeg(img: &DynamicImage) -> Result<Vec<u8>, String> {
    let mut out = Cursor::new(Vec::new());
    let enc = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 90);
    img.write_with_encoder(enc).map_err(|e| e.to_string())?;
    Ok(out.into_inner())
}

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let seconds: u64 = args
        .next()
        .map(|a| a.trim_end_matches('s').parse())
        .transpose()
        .map_err(|e| format!("SECONDS: {e}"))?
        .unwrap_or(20);
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let threads: usize = args
        .next()
        .map(|a| a.parse())
        .transpose()
        .map_err(|e| format!("THREADS: {e}"))?
        .unwrap_or(cores)
        .max(1);
    let megapixels: f64 = args
        .next()
        .map(|a| a.parse())
        .transpose()
        .map_err(|e| format!("MEGAPIXELS: {e}"))?
        .unwrap_or(12.0);
    if !(0.1..=50.0).contains(&megapixels) {
        return Err("MEGAPIXELS must be between 0.1 and 50".into());
    }
    // 4:3, like a phone camera: 12 MP is 4000 x 3000.
    let h = ((megapixels * 1e6 * 3.0 / 4.0).sqrt()) as u32;
    let w = h * 4 / 3;
    let photos: Vec<Vec<u8>> = (1..=3)
        .map(|seed| jpeg(&picture(w, h, seed)))
        .collect::<Result<_, _>>()?;
    let photos = Arc::new(photos);
    let limits = PixelLimits::from_megapixels(50);

    // The upload check, measured alone on one thread first.
    let check_rounds = 3;
    let started = Instant::now();
    for i in 0..check_rounds {
        let bytes = &photos[i % photos.len()];
        media::check(bytes, Format::Jpeg, limits).map_err(|e| format!("{e:?}"))?;
        media::strip_metadata(bytes, Format::Jpeg)?;
    }
    let check_ms = started.elapsed().as_secs_f64() * 1000.0 / check_rounds as f64;

    // One sample for the rendition sizes.
    let sample = media::render(media::decode(&photos[0], Format::Jpeg, limits)?)?;

    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let stop = Arc::clone(&stop);
            let photos = Arc::clone(&photos);
            std::thread::spawn(move || -> Result<u64, String> {
                let mut done = 0u64;
                let mut i = t;
                while !stop.load(Ordering::Relaxed) {
                    let bytes = &photos[i % photos.len()];
                    let image = media::decode(bytes, Format::Jpeg, limits)?;
                    let out = media::render(image)?;
                    if out.len() != media::RENDITION_SIZES.len() {
                        return Err("renditions missing".into());
                    }
                    done += 1;
                    i += 1;
                }
                Ok(done)
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(seconds));
    stop.store(true, Ordering::Relaxed);
    let mut total = 0u64;
    for w in workers {
        total += w.join().map_err(|_| "a worker panicked".to_owned())??;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let per_second = total as f64 / elapsed;
    let report = serde_json::json!({
        "threads": threads,
        "megapixels": (f64::from(w) * f64::from(h) / 1e6 * 10.0).round() / 10.0,
        "width": w,
        "height": h,
        "seconds": (elapsed * 10.0).round() / 10.0,
        "renditions": total,
        "per_second": (per_second * 100.0).round() / 100.0,
        "per_second_per_core": (per_second / threads as f64 * 100.0).round() / 100.0,
        "ms_per_image": if total > 0 { (elapsed * 1000.0 * threads as f64 / total as f64 * 10.0).round() / 10.0 } else { 0.0 },
        "check_ms_per_image": (check_ms * 10.0).round() / 10.0,
        "jpeg_bytes": photos[0].len(),
        "webp_512_bytes": sample[0].1.len(),
        "webp_1280_bytes": sample[1].1.len(),
    });
    println!("{report}");
    Ok(())
}
