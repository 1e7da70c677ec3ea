//! "Did you mean" suggestions for misspelled tool and argument names.

/// The candidate closest to `name`, when one is close enough to be a likely misspelling.
///
/// ```
/// use toolschema::suggest::closest;
/// assert_eq!(closest("qyery", ["query", "limit"]), Some("query"));
/// assert_eq!(closest("zzz", ["query", "limit"]), None);
/// ```
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|candidate| (similarity(name, candidate), candidate))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, candidate)| candidate)
}

fn similarity(a: &str, b: &str) -> f64 {
    // Case slips (`Query` for `query`) count as near matches too.
    strsim::jaro_winkler(a, b)
        .max(strsim::jaro_winkler(&a.to_lowercase(), &b.to_lowercase()) - 0.01)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_closest() {
        let names = ["read_file", "read_text_file", "write_file"];
        assert_eq!(closest("read_fil", names), Some("read_file"));
        assert_eq!(closest("Write_File", names), Some("write_file"));
        assert_eq!(closest("delete", names), None);
    }
}
