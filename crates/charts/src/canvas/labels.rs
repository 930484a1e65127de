//! The chart labels of a language, kept once every label has its translation.

use crate::core::base::Lang;
use crate::Labels;

thread_local! {
    /// The chart labels of the language last drawn in: making them looks up every label's
    /// translation, and each redraw of each chart needs them.
    static LABELS: std::cell::RefCell<Option<(Lang, Labels)>> =
        const { std::cell::RefCell::new(None) };
}

/// The chart labels in `lang`, kept once every label has its translation (a label from the
/// late module's part of the table is missing until that module is linked).
pub fn labels_in(lang: Lang) -> Labels {
    let kept = LABELS.with(|l| {
        l.try_borrow().ok().and_then(|l| {
            l.as_ref()
                .filter(|(kl, _)| *kl == lang)
                .map(|(_, k)| k.clone())
        })
    });
    kept.unwrap_or_else(|| {
        let labels = Labels::new(lang);
        if Labels::KEYS.iter().all(|k| crate::core::base::has(k)) {
            LABELS.with(|l| {
                if let Ok(mut l) = l.try_borrow_mut() {
                    *l = Some((lang, labels.clone()));
                }
            });
        }
        labels
    })
}
