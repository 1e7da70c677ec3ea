//! "Did you mean" suggestions for misspelled tool and argument names.

/// Names longer than this many bytes are not compared: a similarity costs the product of the two
/// lengths, and a name that long is not a misspelling a suggestion could fix.
pub const MAX_NAME_BYTES: usize = 64;

/// At most this many candidates are compared, so one suggestion costs a bounded time whatever
/// the schema or the tool list holds.
pub const MAX_CANDIDATES: usize = 1024;

/// The candidate closest to `name`, when one is close enough to be a likely misspelling.
///
/// Names and candidates longer than [`MAX_NAME_BYTES`] are never suggested, and only the first
/// [`MAX_CANDIDATES`] candidates are compared: a suggestion takes a bounded time, so suggesting
/// for every unexpected name of a large input stays linear in its size.
///
/// ```
/// use toolschema::suggest::closest;
/// assert_eq!(closest("qyery", ["query", "limit"]), Some("query"));
/// assert_eq!(closest("zzz", ["query", "limit"]), None);
/// ```
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    if name.len() > MAX_NAME_BYTES {
        return None;
    }
    let lowercase_name = name.to_lowercase();
    candidates
        .into_iter()
        .take(MAX_CANDIDATES)
        .filter(|candidate| candidate.len() <= MAX_NAME_BYTES)
        .map(|candidate| (similarity(name, &lowercase_name, candidate), candidate))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, candidate)| candidate)
}

/// How alike `name` (whose lowercase form is `lowercase_name`) and `candidate` are.
fn similarity(name: &str, lowercase_name: &str, candidate: &str) -> f64 {
    let as_written = strsim::jaro_winkler(name, candidate);
    let lowercase_candidate = if candidate
        .bytes()
        .all(|b| b.is_ascii() && !b.is_ascii_uppercase())
    {
        std::borrow::Cow::Borrowed(candidate)
    } else {
        std::borrow::Cow::Owned(candidate.to_lowercase())
    };
    if name == lowercase_name && lowercase_candidate == candidate {
        // Lowercasing changes neither (most names): the second comparison would be the first.
        return as_written;
    }
    // Case slips (`Query` for `query`) count as near matches too.
    as_written.max(strsim::jaro_winkler(lowercase_name, &lowercase_candidate) - 0.01)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_comparison_is_enough_only_where_lowercasing_changes_nothing() {
        let words = [
            "query",
            "Query",
            "QUERY",
            "qüery",
            "QÜERY",
            "ǅemal",
            "ǆemal",
            "read_File",
            "ß",
            "SS",
            "",
        ];
        for a in words {
            for b in words {
                let both = strsim::jaro_winkler(a, b)
                    .max(strsim::jaro_winkler(&a.to_lowercase(), &b.to_lowercase()) - 0.01);
                assert_eq!(similarity(a, &a.to_lowercase(), b), both, "{a} {b}");
            }
        }
    }

    #[test]
    fn picks_the_closest() {
        let names = ["read_file", "read_text_file", "write_file"];
        assert_eq!(closest("read_fil", names), Some("read_file"));
        assert_eq!(closest("Write_File", names), Some("write_file"));
        assert_eq!(closest("delete", names), None);
    }

    #[test]
    fn long_names_and_far_candidates_are_not_compared() {
        let long = "a".repeat(MAX_NAME_BYTES + 1);
        assert_eq!(closest(&long, [long.as_str()]), None);
        let mut names: Vec<String> = (0..MAX_CANDIDATES).map(|i| format!("zz{i}")).collect();
        names.push("query".into());
        assert_eq!(closest("qyery", names.iter().map(String::as_str)), None);
    }
}
