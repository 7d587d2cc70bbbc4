//! The one font the charts use, embedded so that PNGs look the same on every machine and no
//! system font library is needed at build or run time. DejaVu Sans; its licence is in
//! `assets/fonts/LICENSE`.

use crate::error::DrawError;
use plotters::style::{register_font, FontStyle};
use std::sync::OnceLock;

/// The family name charts ask for. SVG files name it too, and `sans-serif` is a generic family
/// every SVG viewer resolves, so the SVG text stays text and still finds a font.
pub const FAMILY: &str = "sans-serif";

static DEJAVU_SANS: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

/// Registers the embedded font with plotters, once per process.
pub fn ensure_registered() -> Result<(), DrawError> {
    static REGISTERED: OnceLock<Result<(), DrawError>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            register_font(FAMILY, FontStyle::Normal, DEJAVU_SANS)
                .map_err(|_| DrawError("the embedded DejaVu Sans font could not be parsed".into()))
        })
        .clone()
}
