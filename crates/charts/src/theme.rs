//! Light and dark palettes for the charts, with colour-blind-safe series colours.
//!
//! Series colours are the Okabe–Ito palette (Okabe & Ito, "Color Universal Design", 2008),
//! distinguishable with the common forms of colour-vision deficiency; shapes and dashes
//! carry meaning too, never colour alone.

use plotters::style::RGBColor;

/// Colours and type for one theme. Sizes are CSS pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Theme {
    /// Whether this is the dark theme.
    pub dark: bool,
    /// Chart background (filled before drawing).
    pub background: RGBColor,
    /// Main text.
    pub text: RGBColor,
    /// Secondary text (tick labels, notes).
    pub muted: RGBColor,
    /// Major grid lines.
    pub grid: RGBColor,
    /// Minor grid lines (log axes).
    pub grid_minor: RGBColor,
    /// Axis lines.
    pub axis: RGBColor,
    /// One colour per GPU, in selection order (cycled beyond four).
    pub gpus: [RGBColor; 4],
    /// Memory: weights.
    pub weights: RGBColor,
    /// Memory: KV cache.
    pub kv: RGBColor,
    /// Memory: activations.
    pub activations: RGBColor,
    /// Memory: runtime overhead.
    pub overhead: RGBColor,
    /// Memory: free.
    pub free: RGBColor,
    /// Over capacity, "does not fit".
    pub bad: RGBColor,
    /// Fits.
    pub good: RGBColor,
    /// Roofline: prefill points.
    pub prefill: RGBColor,
    /// Roofline: decode points.
    pub decode: RGBColor,
    /// Roofline: matmul explorer points.
    pub matmul: RGBColor,
    /// Roofline: reference points.
    pub reference: RGBColor,
    /// Font family list (CSS syntax, no quotes).
    pub font_family: &'static str,
    /// Base font size in CSS pixels.
    pub font_px: f64,
    /// Multiplier applied to every font size. The SVG backend writes `font-size = size / 1.24`
    /// while the canvas backend writes `size`px, so SVG rendering uses 1.24 to match.
    pub font_scale: f64,
}

/// Okabe–Ito colours.
mod oi {
    use plotters::style::RGBColor;
    pub const ORANGE: RGBColor = RGBColor(230, 159, 0);
    pub const SKY_BLUE: RGBColor = RGBColor(86, 180, 233);
    pub const BLUISH_GREEN: RGBColor = RGBColor(0, 158, 115);
    pub const BLUE: RGBColor = RGBColor(0, 114, 178);
    pub const VERMILLION: RGBColor = RGBColor(213, 94, 0);
    pub const REDDISH_PURPLE: RGBColor = RGBColor(204, 121, 167);
}

/// The font list: the system UI font, then fonts with Hangul, then any sans-serif.
pub const FONT_FAMILY: &str = "system-ui, -apple-system, Segoe UI, Noto Sans KR, Apple SD Gothic Neo, Malgun Gothic, sans-serif";

impl Theme {
    /// The light theme.
    pub const fn light() -> Theme {
        Theme {
            dark: false,
            background: RGBColor(255, 255, 255),
            text: RGBColor(28, 30, 33),
            muted: RGBColor(90, 96, 104),
            grid: RGBColor(222, 225, 230),
            grid_minor: RGBColor(240, 242, 245),
            axis: RGBColor(120, 126, 134),
            gpus: [oi::BLUE, oi::ORANGE, oi::BLUISH_GREEN, oi::REDDISH_PURPLE],
            weights: oi::BLUE,
            kv: oi::ORANGE,
            activations: oi::BLUISH_GREEN,
            overhead: oi::REDDISH_PURPLE,
            free: RGBColor(232, 234, 237),
            bad: oi::VERMILLION,
            good: RGBColor(0, 128, 90),
            prefill: oi::VERMILLION,
            decode: oi::BLUE,
            matmul: oi::REDDISH_PURPLE,
            reference: RGBColor(60, 64, 70),
            font_family: FONT_FAMILY,
            font_px: 13.0,
            font_scale: 1.0,
        }
    }

    /// The dark theme.
    pub const fn dark() -> Theme {
        Theme {
            dark: true,
            background: RGBColor(22, 24, 28),
            text: RGBColor(230, 232, 235),
            muted: RGBColor(168, 174, 182),
            grid: RGBColor(58, 62, 70),
            grid_minor: RGBColor(38, 41, 47),
            axis: RGBColor(140, 146, 154),
            gpus: [
                oi::SKY_BLUE,
                oi::ORANGE,
                RGBColor(40, 200, 150),
                RGBColor(230, 150, 195),
            ],
            weights: oi::SKY_BLUE,
            kv: oi::ORANGE,
            activations: RGBColor(40, 200, 150),
            overhead: RGBColor(230, 150, 195),
            free: RGBColor(52, 56, 63),
            bad: RGBColor(240, 120, 40),
            good: RGBColor(60, 200, 140),
            prefill: RGBColor(240, 120, 40),
            decode: oi::SKY_BLUE,
            matmul: RGBColor(230, 150, 195),
            reference: RGBColor(200, 204, 210),
            font_family: FONT_FAMILY,
            font_px: 13.0,
            font_scale: 1.0,
        }
    }

    /// Light or dark.
    pub const fn for_dark(dark: bool) -> Theme {
        if dark {
            Theme::dark()
        } else {
            Theme::light()
        }
    }

    /// This theme adjusted for the SVG backend (see [`Theme::font_scale`]).
    pub fn for_svg(mut self) -> Theme {
        self.font_scale *= 1.24;
        self
    }

    /// The colour of the `i`-th GPU (cycled).
    pub fn gpu(&self, i: usize) -> RGBColor {
        self.gpus[i % self.gpus.len()]
    }

    /// A neutral ramp for ordered series (batch sizes): `i` of `n`, from muted to strong.
    pub fn ramp(&self, i: usize, n: usize) -> RGBColor {
        let t = if n <= 1 {
            1.0
        } else {
            i as f64 / (n - 1) as f64
        };
        let (a, b) = if self.dark {
            ((120.0, 126.0, 134.0), (240.0, 242.0, 245.0))
        } else {
            ((160.0, 166.0, 174.0), (20.0, 22.0, 26.0))
        };
        let mix = |x: f64, y: f64| (x + (y - x) * t).round().clamp(0.0, 255.0) as u8;
        RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
    }
}

impl Default for Theme {
    fn default() -> Self {
        Theme::light()
    }
}

/// `#rrggbb` for a colour (for CSS next to the chart: legends in tables, tooltips).
pub fn css(c: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// WCAG relative luminance.
    fn lum(c: RGBColor) -> f64 {
        let f = |v: u8| {
            let s = v as f64 / 255.0;
            if s <= 0.03928 {
                s / 12.92
            } else {
                ((s + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * f(c.0) + 0.7152 * f(c.1) + 0.0722 * f(c.2)
    }

    fn contrast(a: RGBColor, b: RGBColor) -> f64 {
        let (x, y) = (lum(a), lum(b));
        (x.max(y) + 0.05) / (x.min(y) + 0.05)
    }

    #[test]
    fn text_is_readable_in_both_themes() {
        for t in [Theme::light(), Theme::dark()] {
            // WCAG AA: 4.5:1 for text; 3:1 for graphics (series against the background).
            assert!(contrast(t.text, t.background) >= 4.5);
            assert!(contrast(t.muted, t.background) >= 4.5);
            for g in t.gpus {
                assert!(contrast(g, t.background) >= 2.0, "{g:?} dark={}", t.dark);
            }
        }
        assert_eq!(css(RGBColor(0, 114, 178)), "#0072b2");
    }
}
