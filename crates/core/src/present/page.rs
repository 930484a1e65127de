//! The page's state that is not the DOM's: the theme choice, how an edit is recorded in the
//! history, the evaluated scenario that keeps the last good report, the page's address for a
//! scenario, the "config not in the link" notice, and the analysis views' numbers ("12.3 ms",
//! "—" for what is not finite). The web app (`ui::state`) holds these in
//! signals and does the browser's part (storage, `history.pushState`, timers); everything here
//! is tested natively.

use crate::base::units::NumberSymbols;
use crate::base::CalcError;
use crate::present::report::Report;
use crate::scenario::{Notice, NoticeKind, Scenario, ViewMode};

/// The evaluated scenario: the newest good report, and the error of the newest input if it
/// failed (the report then stays the last good one).
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The last report that evaluated without error.
    pub report: Option<Report>,
    /// Why the current scenario could not be evaluated, if it could not.
    pub error: Option<CalcError>,
}

impl Outcome {
    /// The evaluated scenario after `prev` given the newest evaluation, and whether it
    /// changed: a report equal to the last one counts as no change, so the views that read it
    /// are not woken by an edit that changes nothing in it (a language, a section's own
    /// input); a failed evaluation keeps the last good report beside its error.
    pub fn next(prev: Option<Outcome>, res: Result<Report, CalcError>) -> (Outcome, bool) {
        match (res, prev) {
            (Ok(r), prev) => {
                let next = Outcome {
                    report: Some(r),
                    error: None,
                };
                let changed = prev.as_ref() != Some(&next);
                (next, changed)
            }
            (Err(e), Some(p)) => {
                let changed = p.error.as_ref() != Some(&e);
                (
                    Outcome {
                        report: p.report,
                        error: Some(e),
                    },
                    changed,
                )
            }
            (Err(e), None) => (
                Outcome {
                    report: None,
                    error: Some(e),
                },
                true,
            ),
        }
    }
}

/// How a change is recorded in the browser history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum History {
    /// A discrete choice (preset, GPU added or removed): a new entry, so Back undoes it.
    Push,
    /// A continuous edit (typing, sliders): the current entry is replaced.
    Replace,
}

/// Colour theme choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Theme {
    /// Follow the system setting.
    #[default]
    Auto,
    /// Always light.
    Light,
    /// Always dark.
    Dark,
}

impl Theme {
    /// The next theme in the toggle's cycle.
    pub fn next(self) -> Theme {
        match self {
            Theme::Auto => Theme::Light,
            Theme::Light => Theme::Dark,
            Theme::Dark => Theme::Auto,
        }
    }

    /// Translation key of the label.
    pub fn key(self) -> &'static str {
        match self {
            Theme::Auto => "ui_theme_auto",
            Theme::Light => "ui_theme_light",
            Theme::Dark => "ui_theme_dark",
        }
    }

    /// How the choice is remembered in storage (empty = follow the system).
    pub fn attr(self) -> &'static str {
        match self {
            Theme::Auto => "",
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }

    /// The choice a stored value names ([`Theme::attr`]); Auto for none or anything else.
    pub fn from_stored(stored: Option<&str>) -> Theme {
        match stored {
            Some("light") => Theme::Light,
            Some("dark") => Theme::Dark,
            _ => Theme::Auto,
        }
    }

    /// Whether the dark palette is in effect, given whether the system prefers dark.
    pub fn is_dark(self, system_dark: bool) -> bool {
        match self {
            Theme::Auto => system_dark,
            Theme::Light => false,
            Theme::Dark => true,
        }
    }

    /// The `data-theme` value on `<html>`: always explicit, "Auto" resolved with the system's
    /// preference, so the stylesheet states each palette once.
    pub fn resolved_attr(self, system_dark: bool) -> &'static str {
        if self.is_dark(system_dark) {
            "dark"
        } else {
            "light"
        }
    }
}

/// The page's address for a query: the path alone when the query is empty (the default
/// scenario), else `path?query`.
pub fn page_url(path: &str, query: &str) -> String {
    if query.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{query}")
    }
}

/// The query of a link to `s` (the copy-link button, the embed's back-link); `drop_embed`
/// links to the full page rather than the embedded view.
pub fn link_query(s: &Scenario, drop_embed: bool) -> String {
    in_view(s, drop_embed, |s| s.share_query().0)
}

/// [`link_query`] of a scenario without a pasted config (a preset's or a quick model's): the
/// same query, made without linking the config's encoder (the embeds' first answer).
pub fn link_query_without_config(s: &Scenario, drop_embed: bool) -> String {
    in_view(s, drop_embed, Scenario::query_without_config)
}

/// `query` of `s`, or of its full page when `drop_embed`.
fn in_view(s: &Scenario, drop_embed: bool, query: impl Fn(&Scenario) -> String) -> String {
    if drop_embed && s.view != ViewMode::Full {
        let mut full = s.clone();
        full.view = ViewMode::Full;
        query(&full)
    } else {
        query(s)
    }
}

/// Puts `notice` (the "config not in the link" notice of the newest URL write, or none) in
/// place of the one `notices` holds, and says whether anything changed: the list is left
/// alone when it already says the same, so the notice bar is not drawn again after every edit.
pub fn replace_link_notice(notices: &mut Vec<Notice>, notice: Option<Notice>) -> bool {
    let mut old = notices
        .iter()
        .filter(|n| n.kind == NoticeKind::ConfigNotInLink);
    if old.next() == notice.as_ref() && old.next().is_none() {
        return false;
    }
    notices.retain(|n| n.kind != NoticeKind::ConfigNotInLink);
    notices.extend(notice);
    true
}

/// Whether two scenarios are the same scenario (compared as canonical queries, so two
/// modules that tell each other of a change never loop).
pub fn same_scenario(a: &Scenario, b: &Scenario) -> bool {
    a.to_query() == b.to_query()
}

/// "12.3 ms" (significant digits in the language's symbols), "—" when not finite.
pub fn fmt_ms(nf: NumberSymbols, ms: f64) -> String {
    if ms.is_finite() {
        format!("{} ms", nf.sig(ms))
    } else {
        "—".to_string()
    }
}

/// "9.8–14 ms": a prediction range, "—" when either end is not finite.
pub fn fmt_ms_range(nf: NumberSymbols, r: (f64, f64)) -> String {
    if r.0.is_finite() && r.1.is_finite() {
        format!("{}–{} ms", nf.sig(r.0), nf.sig(r.1))
    } else {
        "—".to_string()
    }
}

/// A number with significant digits in the language's symbols, "—" when not finite.
pub fn fmt_num(nf: NumberSymbols, v: f64) -> String {
    if v.is_finite() {
        nf.sig(v)
    } else {
        "—".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::Phrase;
    use crate::present::first_screen::read_query;

    #[test]
    fn the_theme_cycles_and_resolves() {
        let mut t = Theme::default();
        let mut seen = Vec::new();
        for _ in 0..3 {
            seen.push(t);
            t = t.next();
        }
        assert_eq!(seen, [Theme::Auto, Theme::Light, Theme::Dark]);
        assert_eq!(t, Theme::Auto);
        for t in seen {
            // What is stored is read back as the same choice.
            let stored = Some(t.attr()).filter(|a| !a.is_empty());
            assert_eq!(Theme::from_stored(stored), t);
            for system_dark in [false, true] {
                let attr = t.resolved_attr(system_dark);
                assert_eq!(attr == "dark", t.is_dark(system_dark));
            }
        }
        assert_eq!(Theme::Auto.resolved_attr(true), "dark");
        assert_eq!(Theme::Light.resolved_attr(true), "light");
        assert_eq!(Theme::from_stored(Some("<script>")), Theme::Auto);
    }

    #[test]
    fn a_failed_evaluation_keeps_the_last_good_report() {
        let (scenario, _) = read_query("");
        let report =
            crate::present::report::evaluate(&scenario, crate::hardware::Catalog::builtin())
                .expect("the default evaluates");
        let bad = CalcError::BadValue {
            key: "x".into(),
            found: Phrase::verbatim("-1"),
            expected: Phrase::verbatim("a positive number"),
        };
        let (first, changed) = Outcome::next(None, Ok(report.clone()));
        assert!(changed);
        let (same, changed) = Outcome::next(Some(first.clone()), Ok(report.clone()));
        assert!(!changed, "an equal report is no change");
        assert_eq!(same, first);
        let (failed, changed) = Outcome::next(Some(first), Err(bad.clone()));
        assert!(changed);
        assert_eq!(
            failed.report.as_ref(),
            Some(&report),
            "the last good report stays"
        );
        assert_eq!(failed.error.as_ref(), Some(&bad));
        let (again, changed) = Outcome::next(Some(failed), Err(bad.clone()));
        assert!(!changed, "the same error again is no change");
        let (none, changed) = Outcome::next(None, Err(bad));
        assert!(changed && none.report.is_none() && none.error.is_some());
        assert_eq!(again.report, Some(report));
    }

    #[test]
    fn links_and_the_link_notice() {
        assert_eq!(page_url("/calc/", ""), "/calc/");
        assert_eq!(page_url("/calc/", "tp=2"), "/calc/?tp=2");
        let (embed, _) = read_query("?embed=memory&tp=2");
        assert_ne!(embed.view, ViewMode::Full);
        let full = link_query(&embed, true);
        assert!(!full.contains("embed"), "{full}");
        assert!(full.contains("tp=2"), "{full}");
        assert!(link_query(&embed, false).contains("embed=memory"));
        let (full_page, _) = read_query(&format!("?{full}"));
        assert!(same_scenario(
            &full_page,
            &Scenario {
                view: ViewMode::Full,
                ..embed.clone()
            }
        ));
        // The notice is replaced only when it changes.
        let notice = Notice {
            param: "config".into(),
            kind: NoticeKind::ConfigNotInLink,
            count: 1,
        };
        let mut ns = Vec::new();
        assert!(!replace_link_notice(&mut ns, None));
        assert!(replace_link_notice(&mut ns, Some(notice.clone())));
        assert!(!replace_link_notice(&mut ns, Some(notice.clone())));
        assert_eq!(ns.len(), 1);
        assert!(replace_link_notice(&mut ns, None));
        assert!(ns.is_empty());
    }

    #[test]
    fn view_numbers_are_the_symbols_sig_digits_with_a_dash_for_non_finite() {
        let nf = NumberSymbols::COMMA_DOT;
        assert_eq!(fmt_ms(nf, 12.34), format!("{} ms", nf.sig(12.34)));
        assert_eq!(
            fmt_ms_range(nf, (9.8, 14.0)),
            format!("{}–{} ms", nf.sig(9.8), nf.sig(14.0))
        );
        assert_eq!(fmt_num(nf, 1234.5), nf.sig(1234.5));
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(fmt_ms(nf, bad), "—");
            assert_eq!(fmt_num(nf, bad), "—");
            assert_eq!(fmt_ms_range(nf, (1.0, bad)), "—");
            assert_eq!(fmt_ms_range(nf, (bad, 1.0)), "—");
        }
    }
}
