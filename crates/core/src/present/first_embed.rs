//! An embedded widget's first answer, before the shell: what the prerendered copy of the widget
//! (`?embed=memory`, `kv` or `batch`) needs to show a link's scenario, made by the builders the
//! live widget binds: the first screen's texts ([`FirstScreen`]: the strip's inputs, the cards,
//! the fit table), the explanation beside the chart ([`explain_widget`]), the chart's data,
//! and the link back to the full calculator.

#[cfg(test)]
use super::explain::explain as explain_section;
use super::explain::{explain_widget, Section};
use super::first_screen::{json_unless_missed, FirstScreen};
use super::page::{link_query_without_config, page_url};
use super::series::{BatchSeries, KvSeries, MemoryBars};
use crate::base::i18n::Lang;
use crate::scenario::{EmbedWidget, GpuChoice, ViewMode};
use serde::Serialize;

/// The chart an embedded widget draws, with its data.
#[derive(Debug, Clone, PartialEq)]
pub enum EmbedChart {
    /// "Does it fit?" bars (`?embed=memory`).
    Memory(MemoryBars),
    /// KV memory against tokens (`?embed=kv`).
    Kv(KvSeries),
    /// Concurrent requests against context length (`?embed=batch`).
    Batch(BatchSeries),
}

/// An embedded widget's first answer: see the module's note.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EmbedScreen {
    /// The first screen's texts (the widget shows some of them).
    #[serde(flatten)]
    pub first: FirstScreen,
    /// The widget's id (`memory`, `kv`, `batch`).
    pub widget: &'static str,
    /// The first GPU's catalog id: the strip's GPU select.
    pub gpu: String,
    /// The explanation's paragraphs.
    pub explain: Vec<String>,
    /// The "open the full calculator" link.
    pub href: String,
    /// The chart's data (drawn by the module, not sent as text).
    #[serde(skip)]
    pub chart: EmbedChart,
}

impl EmbedScreen {
    /// The widget of the page at `path` + `query` for a browser whose language reads as
    /// `browser`, when its copy can show it: the memory, KV or batch widget with its input strip,
    /// and a scenario [`FirstScreen::of`] would serve. `None` otherwise: the page then waits
    /// for the live app.
    pub fn of(path: &str, query: &str, browser: Lang) -> Option<EmbedScreen> {
        let (first, s, r) = FirstScreen::with_report(query, browser, |v| {
            matches!(
                v,
                ViewMode::Embed(EmbedWidget::Memory | EmbedWidget::Kv | EmbedWidget::Batch)
            )
        })?;
        let ViewMode::Embed(widget) = s.view else {
            return None;
        };
        let Some(GpuChoice::Catalog(gpu)) = s.gpus.first() else {
            return None;
        };
        if !s.embed_inputs {
            return None;
        }
        // The first screen's language (the link's, else the browser's).
        let lang = Lang::from_code(first.lang).unwrap_or_default();
        let (section, chart) = match widget {
            EmbedWidget::Memory => (Section::Fit, EmbedChart::Memory(r.memory_bars())),
            EmbedWidget::Kv => (Section::Kv, EmbedChart::Kv(r.kv_series())),
            EmbedWidget::Batch => (Section::Batch, EmbedChart::Batch(r.batch_series())),
            _ => return None,
        };
        Some(EmbedScreen {
            widget: widget.id(),
            gpu: gpu.clone(),
            explain: explain_widget(section, &r, lang),
            // A preset's scenario: no config to leave out of the link.
            href: page_url(path, &link_query_without_config(&s, true)),
            chart,
            first,
        })
    }

    /// [`EmbedScreen::of`], and it as JSON text (without the chart); nothing and "" when the
    /// copy cannot show it.
    pub fn json(path: &str, query: &str, browser: Lang) -> (String, Option<EmbedScreen>) {
        json_unless_missed(|| EmbedScreen::of(path, query, browser))
    }

    /// The language the widget is in (its chart's labels).
    pub fn lang(&self) -> Lang {
        Lang::from_code(self.first.lang).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::present::first_screen::{CardsText, FitRowText};
    use crate::present::page::link_query;
    use crate::present::report::{own_math_as_titles, report_for_test};
    use crate::scenario::Scenario;

    /// Each of the three widgets at a link's settings: the first screen's texts, the
    /// explanation and the chart the live widget shows for the same scenario.
    #[test]
    fn embeds_of_links() {
        let q = "?embed=kv&model=qwen3-8b&gpu=h100-sxm&ctx=8192&n=8";
        let e = EmbedScreen::of("/course/", q, Lang::En).expect("served");
        let (s, _) = Scenario::from_query(q);
        let r = own_math_as_titles(report_for_test(&s));
        assert_eq!(e.widget, "kv");
        assert_eq!(e.gpu, "h100-sxm");
        assert_eq!(e.first.cards, CardsText::new(Lang::En, false, &r));
        assert_eq!(e.first.rows, FitRowText::rows(Lang::En, &r));
        assert_eq!(e.explain, explain_section(Section::Kv, &r, Lang::En));
        assert_eq!(e.chart, EmbedChart::Kv(r.kv_series()));
        assert_eq!(e.href, page_url("/course/", &link_query(&s, true)));
        assert!(!e.href.contains("embed"), "{}", e.href);
        for (w, section) in [("memory", Section::Fit), ("batch", Section::Batch)] {
            let e = EmbedScreen::of("/", &format!("?embed={w}&lang=ko"), Lang::En).expect(w);
            let (s, _) = Scenario::from_query(&format!("?embed={w}"));
            let r = report_for_test(&s);
            assert_eq!((e.widget, e.lang()), (w, Lang::Ko));
            assert_eq!(e.explain, explain_section(section, &r, Lang::Ko));
        }
        // What the copies cannot show: the full page, other widgets, a hidden strip, a notice.
        for q in [
            "?n=2",
            "?embed=roofline",
            "?embed=cost",
            "?embed=planner",
            "?embed=memory&embed_inputs=0",
            "?embed=memory&ctx=abc",
            "?embed=memory&gpu=nope",
            "?embed=nope",
        ] {
            assert_eq!(EmbedScreen::of("/", q, Lang::En), None, "{q}");
        }
        assert_eq!(EmbedScreen::json("/", "?embed=matmul", Lang::En).0, "");
        let (json, kept) = EmbedScreen::json("/", "?embed=memory", Lang::En);
        assert!(json.contains("\"widget\":\"memory\""), "{json}");
        assert!(kept.is_some());
    }
}
