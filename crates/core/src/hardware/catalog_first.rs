//! The built-in catalog as the page's modules parse it (`data/accelerators.app.csv`), without
//! the texts a first screen neither shows nor computes with (`tests::slim`), stored:
//! what the first-answer module (`crates/first`) reads a link's GPUs from, so it neither links
//! nor runs the catalog's parser (3–5 ms of a link's first answer in Chromium, most of it the
//! first, unoptimised run of the parser and its float parsing). `data/accelerators_first.bin`
//! holds the [`Catalog`] in borsh's binary form; made by this module's test
//! (`REGENERATE_FIRST_CATALOG=1 cargo test -p llmcalc-core --lib catalog_first`), which fails
//! when the file is not what the parser makes of the table today.

use super::catalog::Catalog;
use borsh::BorshDeserialize;
use std::sync::OnceLock;

/// The stored catalog.
static BYTES: &[u8] = include_bytes!("../../../../data/accelerators_first.bin");

/// The stored catalog, read once (empty were the bytes unreadable: a test guarantees they are
/// not, and with no GPU the first screen declines every link).
pub fn builtin() -> &'static Catalog {
    static STORED: OnceLock<Catalog> = OnceLock::new();
    STORED.get_or_init(|| {
        Catalog::try_from_slice(BYTES).unwrap_or(Catalog {
            accelerators: Vec::new(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::generated::check_or_write;

    /// The app table without the texts no first screen shows nor computes with (sources,
    /// notes, vendor, form factor, the interconnect's kind, the price's source and date); the
    /// ids, names and aliases a link's GPU is found by, and the memory type its capacity
    /// depends on, are kept.
    pub(crate) fn slim(mut c: Catalog) -> Catalog {
        for a in &mut c.accelerators {
            for text in [
                &mut a.vendor,
                &mut a.form_factor,
                &mut a.architecture_source,
                &mut a.source,
                &mut a.notes,
                &mut a.interconnect.kind,
            ] {
                text.clear();
            }
            if let Some(p) = &mut a.price {
                p.source.clear();
                p.date.clear();
            }
        }
        c
    }

    #[test]
    fn the_stored_catalog_is_the_parsed_app_table() {
        let parsed = slim(
            Catalog::parse(include_str!("../../../../data/accelerators.app.csv"))
                .expect("the app table parses"),
        );
        let made = borsh::to_vec(&parsed).expect("serialises");
        let fresh = check_or_write(
            BYTES,
            &made,
            "data/accelerators_first.bin",
            "REGENERATE_FIRST_CATALOG",
            "catalog_first",
        );
        if !fresh {
            return;
        }
        assert_eq!(builtin(), &parsed);
        assert!(builtin().accelerators.len() > 20);
    }
}
