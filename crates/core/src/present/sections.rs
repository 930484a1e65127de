//! The page's sections, one list: each section's anchor (the id of its heading, where the
//! section index jumps), the key of its name in the index and on its placeholder, which wasm
//! module draws it, whether it works only while on screen, and, for a section of the late
//! module, the height its placeholder reserves at each band of viewport widths.
//!
//! The page (`ui::app`), the section index (`ui::section_index`), the late module's mount
//! (`ui::late_app`) and the placeholders (`ui::late::LateSlot`) all read this list. Adding a
//! section is one arm of [`PageSection`] (the compiler then asks for its anchor, key, module
//! and heights) plus its component: for a late section, an arm of `ui::late_app::section_body`
//! (the one place that names a late section's component, so the shell never links its code);
//! for a shell section, its place in `ui::app`.

/// The wasm module that draws a section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Module {
    /// The shell (`src/main.rs`): what the first answer needs.
    Shell,
    /// The late module (`src/bin/sections.rs`): loaded after the first answer is painted.
    Late,
}

/// A band of viewport widths the placeholders' heights are measured for: the band covers
/// widths up to `max_width` (`None`: no upper bound) and above the next band's `max_width`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeightBand {
    /// The widest viewport of the band in CSS pixels (`None` for the widest band).
    pub max_width: Option<u16>,
    /// The viewport width the heights were measured at.
    pub measured_at: u16,
}

/// The bands of widths, widest first. `style/late.css` has one media query `max-width` for each
/// but the first, with each late section's height in that band ([`reserved_height_rules`]). The bands follow where a
/// section's height changes with the width (text wraps, charts take a height for their width,
/// the page goes to one column at 60rem).
pub const HEIGHT_BANDS: [HeightBand; 6] = [
    HeightBand {
        max_width: None,
        measured_at: 1400,
    },
    HeightBand {
        max_width: Some(1339),
        measured_at: 1280,
    },
    HeightBand {
        max_width: Some(1151),
        measured_at: 1024,
    },
    HeightBand {
        max_width: Some(960),
        measured_at: 800,
    },
    HeightBand {
        max_width: Some(699),
        measured_at: 600,
    },
    HeightBand {
        max_width: Some(480),
        measured_at: 390,
    },
];

/// Declares [`PageSection`] and its `ALL` from one list, so the order of the page is the order
/// of the declaration and no arm can be missing from `ALL`.
macro_rules! page_sections {
    ($($(#[$doc:meta])* $arm:ident,)*) => {
        /// A section of the full page, declared in page order.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum PageSection {
            $($(#[$doc])* $arm,)*
        }

        impl PageSection {
            /// Every section, in page order (the section index's order).
            pub const ALL: &'static [Self] = &[$(Self::$arm,)*];
        }
    };
}

page_sections! {
    /// The model, GPU and workload inputs.
    Inputs,
    /// The fit table.
    Fit,
    /// The memory and KV-cache charts.
    Charts,
    /// The roofline.
    Roofline,
    /// The matmul explorer.
    Matmul,
    /// Performance and cost.
    Perf,
    /// The accuracy of the performance model.
    Accuracy,
    /// The deployment planner.
    Planner,
    /// Serving under load (the simulator).
    Serving,
}

impl PageSection {
    /// The id of the section's heading: the section index's anchor. A late section's
    /// placeholder carries it until the section mounts (every late section's heading is
    /// `<slot name>-title`).
    pub const fn anchor(self) -> &'static str {
        match self {
            Self::Inputs => "model-title",
            Self::Fit => "fit-title",
            Self::Charts => "charts-title",
            Self::Roofline => "roofline-title",
            Self::Matmul => "matmul-title",
            Self::Perf => "perf-title",
            Self::Accuracy => "accuracy-title",
            Self::Planner => "planner-title",
            Self::Serving => "serving-title",
        }
    }

    /// The translation key of the section's name in the section index (and on a late
    /// section's placeholder).
    pub const fn label_key(self) -> &'static str {
        match self {
            Self::Inputs => "nav_inputs",
            Self::Fit => "nav_fit",
            Self::Charts => "nav_charts",
            Self::Roofline => "nav_roofline",
            Self::Matmul => "nav_matmul",
            Self::Perf => "nav_perf",
            Self::Accuracy => "nav_accuracy",
            Self::Planner => "nav_planner",
            Self::Serving => "sv_nav",
        }
    }

    /// The module that draws the section.
    pub const fn module(self) -> Module {
        match self {
            Self::Inputs | Self::Fit | Self::Charts => Module::Shell,
            Self::Roofline
            | Self::Matmul
            | Self::Perf
            | Self::Accuracy
            | Self::Planner
            | Self::Serving => Module::Late,
        }
    }

    /// Whether the section is drawn inside a `LazySection` on the full page: it draws and
    /// recomputes only while on or near the screen. The serving section is not (its
    /// simulator runs in a worker, started when it nears the screen); nor are the inputs and
    /// the fit table (the first answer).
    pub const fn lazy(self) -> bool {
        match self {
            Self::Inputs | Self::Fit | Self::Serving => false,
            Self::Charts
            | Self::Roofline
            | Self::Matmul
            | Self::Perf
            | Self::Accuracy
            | Self::Planner => true,
        }
    }

    /// The height in CSS pixels a late section's placeholder reserves until the section
    /// mounts, one per [`HEIGHT_BANDS`] band: the section's height with the default scenario
    /// at the band's `measured_at` width (e2e "late module: placeholders keep each section's
    /// height" measures each section against its placeholder at each of these widths; a
    /// section whose content is shorter for another scenario leaves no gap, since the height
    /// is a minimum held only until the section mounts). `None` for a shell section.
    pub const fn reserved_heights(self) -> Option<[u16; HEIGHT_BANDS.len()]> {
        match self {
            Self::Inputs | Self::Fit | Self::Charts => None,
            Self::Roofline => Some([1151, 1124, 1283, 1114, 1152, 1368]),
            Self::Matmul => Some([948, 901, 1030, 891, 920, 1027]),
            Self::Perf => Some([2861, 2925, 3117, 2935, 3020, 3283]),
            Self::Accuracy => Some([1023, 1121, 1278, 1121, 1296, 1128]),
            Self::Planner => Some([3588, 3734, 4120, 3725, 3902, 4782]),
            Self::Serving => Some([3181, 3259, 3567, 3259, 3489, 4214]),
        }
    }

    /// The late module's name for the section's slot (`data-late-slot`): the anchor without
    /// `-title`. `None` for a shell section.
    pub fn slot_name(self) -> Option<&'static str> {
        match self.module() {
            Module::Late => self.anchor().strip_suffix("-title"),
            Module::Shell => None,
        }
    }
}

/// What the late module draws into one of the shell's places: a late page section (in a
/// `ui::late::LateSlot`), or a part: one of an embedded widget (`PerfCost`, `PerfLatency`, in
/// a `LateSlot`) or of the shell's own panels (`Hub`, `Export`, `CustomGpu`, in a
/// `ui::late::LatePart`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatePiece {
    /// A page section drawn by the late module (`PageSection::module` is `Late`).
    Section(PageSection),
    /// The performance section's cost charts alone (the cost widget).
    PerfCost,
    /// The performance section's latency curves alone (the latency widget).
    PerfLatency,
    /// The Hugging Face Hub fetch in the model panel.
    Hub,
    /// The export bar above the results.
    Export,
    /// The custom accelerator's fields in the GPU panel.
    CustomGpu,
}

impl LatePiece {
    /// Every piece that is not a page section.
    pub const PARTS: [Self; 5] = [
        Self::PerfCost,
        Self::PerfLatency,
        Self::Hub,
        Self::Export,
        Self::CustomGpu,
    ];

    /// Its name in the page (`data-late-slot`, test ids): a section's [`PageSection::slot_name`].
    pub fn name(self) -> &'static str {
        match self {
            Self::Section(s) => s.slot_name().unwrap_or(""),
            Self::PerfCost => "perf-cost",
            Self::PerfLatency => "perf-latency",
            Self::Hub => "hub",
            Self::Export => "export",
            Self::CustomGpu => "custom-gpu",
        }
    }

    /// The piece named `name` (`None` for a name the page does not use).
    pub fn from_name(name: &str) -> Option<Self> {
        PageSection::ALL
            .iter()
            .filter(|s| s.module() == Module::Late)
            .map(|s| Self::Section(*s))
            .chain(Self::PARTS)
            .find(|p| p.name() == name)
    }

    /// The key of the name its placeholder shows: its section's (a widget's part, its
    /// section's), else a generic "Section".
    pub const fn label_key(self) -> &'static str {
        match self {
            Self::Section(s) => s.label_key(),
            Self::PerfCost | Self::PerfLatency => PageSection::Perf.label_key(),
            Self::Hub | Self::Export | Self::CustomGpu => "late_section",
        }
    }

    /// The id its placeholder's heading carries until it mounts: a section's anchor (`None`
    /// for a part, whose view has no anchored heading).
    pub const fn anchor(self) -> Option<&'static str> {
        match self {
            Self::Section(s) => Some(s.anchor()),
            Self::PerfCost | Self::PerfLatency | Self::Hub | Self::Export | Self::CustomGpu => None,
        }
    }

    /// Whether the late module makes it inside a `LazySection` on the full page
    /// ([`PageSection::lazy`]; a widget's part as its section; a panel's part never: small,
    /// and used at once).
    pub const fn lazy(self) -> bool {
        match self {
            Self::Section(s) => s.lazy(),
            Self::PerfCost | Self::PerfLatency => PageSection::Perf.lazy(),
            Self::Hub | Self::Export | Self::CustomGpu => false,
        }
    }
}

impl From<PageSection> for LatePiece {
    fn from(s: PageSection) -> Self {
        Self::Section(s)
    }
}

/// The marks around the rules of `style/late.css` that [`reserved_height_rules`] writes.
pub const LATE_CSS_MARKS: (&str, &str) = (
    "/* Reserved heights, written from core::present::sections \
     (REGENERATE_LATE_CSS=1 cargo test -p llmcalc-core --lib sections). */\n",
    "/* End of the reserved heights. */\n",
);

/// The rules of `style/late.css` that keep each late section's place until it mounts: for
/// each band of [`HEIGHT_BANDS`] (a `max-width` media query but the first), each late
/// section's height of [`PageSection::reserved_heights`] as the `min-height` of its slot. The
/// page's stylesheet holds them (no style attribute, nothing in the shell's wasm); a test
/// checks the file against this text.
pub fn reserved_height_rules() -> String {
    let mut out = String::new();
    for (i, band) in HEIGHT_BANDS.iter().enumerate() {
        out.push_str(&format!("/* Measured at {} px. */\n", band.measured_at));
        let indent = if let Some(max) = band.max_width {
            out.push_str(&format!("@media (max-width: {max}px) {{\n"));
            "  "
        } else {
            ""
        };
        for s in PageSection::ALL {
            if let (Some(name), Some(h)) = (s.slot_name(), s.reserved_heights()) {
                out.push_str(&format!(
                    "{indent}.late-slot:not([data-late-ready])[data-late-slot=\"{name}\"] \
                     {{ min-height: {}px; }}\n",
                    h[i]
                ));
            }
        }
        if band.max_width.is_some() {
            out.push_str("}\n");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::i18n::has;

    fn late_sections() -> impl Iterator<Item = PageSection> {
        PageSection::ALL
            .iter()
            .copied()
            .filter(|s| s.module() == Module::Late)
    }

    #[test]
    fn anchors_and_names_are_unique() {
        let mut anchors: Vec<_> = PageSection::ALL.iter().map(|s| s.anchor()).collect();
        anchors.sort_unstable();
        anchors.dedup();
        assert_eq!(anchors.len(), PageSection::ALL.len());
        let pieces: Vec<_> = late_sections()
            .map(LatePiece::Section)
            .chain(LatePiece::PARTS)
            .collect();
        let mut names: Vec<_> = pieces.iter().map(|p| p.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), pieces.len());
        for p in pieces {
            assert!(!p.name().is_empty(), "{p:?}");
            assert_eq!(LatePiece::from_name(p.name()), Some(p));
        }
        assert_eq!(LatePiece::from_name("fit"), None);
        assert_eq!(LatePiece::from_name(""), None);
    }

    #[test]
    fn shell_sections_come_first_and_only_late_ones_have_slots() {
        // The late sections' slots are built after the shell's sections, below the fold.
        let first_late = PageSection::ALL
            .iter()
            .position(|s| s.module() == Module::Late)
            .unwrap_or(PageSection::ALL.len());
        assert!(PageSection::ALL[first_late..]
            .iter()
            .all(|s| s.module() == Module::Late));
        assert_eq!(PageSection::ALL.first(), Some(&PageSection::Inputs));
        for s in PageSection::ALL {
            let late = s.module() == Module::Late;
            assert_eq!(s.slot_name().is_some(), late, "{s:?}");
            assert_eq!(s.reserved_heights().is_some(), late, "{s:?}");
        }
    }

    #[test]
    fn every_label_key_is_translated() {
        for s in PageSection::ALL {
            assert!(has(s.label_key()), "{s:?}: {}", s.label_key());
        }
        for p in LatePiece::PARTS {
            assert!(has(p.label_key()), "{p:?}: {}", p.label_key());
        }
    }

    #[test]
    fn every_late_section_reserves_a_height_in_every_band() {
        for s in late_sections() {
            let heights = s.reserved_heights().unwrap_or_default();
            assert!(heights.iter().all(|h| *h > 100), "{s:?}: {heights:?}");
        }
    }

    #[test]
    fn bands_are_ordered_and_each_measured_inside_itself() {
        assert_eq!(HEIGHT_BANDS[0].max_width, None);
        for pair in HEIGHT_BANDS.windows(2) {
            let (wider, narrower) = (pair[0], pair[1]);
            let max = narrower.max_width.unwrap_or(0);
            assert!(wider.max_width.is_none_or(|w| w > max));
            assert!(narrower.measured_at <= max && wider.measured_at > max);
        }
    }

    /// `style/late.css` holds the reserved heights as the list writes them (between its marks;
    /// `REGENERATE_LATE_CSS=1` rewrites that part of the file).
    #[test]
    fn late_css_holds_the_reserved_heights() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../style/late.css");
        let css = std::fs::read_to_string(path).unwrap_or_default();
        let (begin, end) = LATE_CSS_MARKS;
        let (Some(a), Some(b)) = (css.find(begin), css.find(end)) else {
            panic!("{path} lacks the marks around the reserved heights");
        };
        let (a, b) = (a + begin.len(), b);
        let want = reserved_height_rules();
        if std::env::var_os("REGENERATE_LATE_CSS").is_some() {
            let fresh = format!("{}{want}{}", &css[..a], &css[b..]);
            std::fs::write(path, fresh).expect("writes style/late.css");
            return;
        }
        assert_eq!(
            css.get(a..b),
            Some(want.as_str()),
            "style/late.css differs from PageSection::reserved_heights: \
             REGENERATE_LATE_CSS=1 cargo test -p llmcalc-core --lib sections"
        );
    }

    /// docs/ARCHITECTURE.md's table of the page's sections is this enum, row for row.
    #[test]
    fn the_architecture_page_lists_the_sections_in_order() {
        let doc = include_str!("../../../../docs/ARCHITECTURE.md");
        let table = doc
            .split("## The page's sections")
            .nth(1)
            .expect("the section table's heading");
        let rows: Vec<Vec<&str>> = table
            .lines()
            .skip_while(|l| !l.starts_with("| section"))
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .map(|l| {
                l.split('|')
                    .map(str::trim)
                    .filter(|c| !c.is_empty())
                    .collect()
            })
            .collect();
        let expected: Vec<Vec<String>> = PageSection::ALL
            .iter()
            .map(|s| {
                vec![
                    format!("{s:?}"),
                    format!("`{}`", s.anchor()),
                    match s.module() {
                        Module::Shell => "shell".to_string(),
                        Module::Late => "late".to_string(),
                    },
                    if s.lazy() { "yes" } else { "no" }.to_string(),
                ]
            })
            .collect();
        assert_eq!(rows, expected);
    }
}
