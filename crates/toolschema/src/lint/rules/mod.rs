//! One file per rule: its code, severity, documentation and check.
//!
//! # Adding a rule
//!
//! 1. Write `rules/<name>.rs`: a [`declare_rule!`](super::registry) block whose doc comment has the
//!    sections *What it flags*, *Why it matters*, *Example* and *Fix* (that text is what `toolschema
//!    rule CODE` prints), and the check it names.
//! 2. Add `<name>::<STATIC>` to the list below, in code order. That one line declares the module,
//!    puts the rule in [`RULES`] and gives it a snapshot test.
//! 3. Write the fixture `rules/fixtures/CODE.json`: a catalog with the cases the rule must flag and
//!    the ones it must leave alone. Run `cargo test -p toolschema lint::rules`, then review and
//!    accept the new `rules/snapshots/CODE.snap` (`cargo insta review`, or rename the `.snap.new`
//!    file insta writes).
//!
//! The registry's own tests fail when two rules share a code or a name, when codes are out of
//! order, when a rule lacks a documentation section, and when a fixture names no rule.
//!
//! # Precision on real servers
//!
//! Every rule, run on the catalogs of six real servers (npm `@modelcontextprotocol/server-everything`,
//! `server-filesystem`, `server-memory` 2026.8.31; PyPI `mcp-server-time`, `mcp-server-git`
//! 2026.10.19, `mcp-server-fetch` 2026.10.24, snapshotted live by `scripts/test-data.sh`), each
//! finding judged by hand. A rule stays in the default set when its findings there are right;
//! style and hardening advice is `pedantic` (run with `--select pedantic` or `ALL`). The counts
//! are checked by `tests/lint_precision.rs`; the judgement is the reason given.
//!
//! | rule | set | everything | filesystem | memory | time | git | fetch | findings | right | wrong |
//! | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
//! | SCH-001 missing-required | default | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 |
//! | SCH-002 open-object | default | 13 | 15 | 14 | 2 | 12 | 1 | 57 | 57 | 0 |
//! | SCH-004 unbounded-size | pedantic | 4 | 21 | 21 | 4 | 24 | 1 | 75 | 69 | 6 |
//! | DESC-002 weak-description | pedantic | 0 | 0 | 0 | 0 | 1 | 0 | 1 | 0 | 1 |
//! | DESC-003 property-description | pedantic | 1 | 18 | 4 | 0 | 22 | 0 | 45 | 30 | 15 |
//! | every other rule | default | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 |
//!
//! - SCH-001: before it read defaults it found 4, all wrong: every property of those schemas has a
//!   `default`, so leaving it out is intended.
//! - SCH-002: right each time. Every one is an object that declares its properties and accepts
//!   others (the roots of all 51 tools, the items of memory's and filesystem's arrays of
//!   objects): a misspelled argument passes unnoticed (zod strips unknown keys, pydantic ignores
//!   them). Each is closed by the safe fix.
//! - SCH-004: right for names, identifiers, paths, timezones, revisions, URLs and lists of them;
//!   wrong where the value is content whose size is the caller's business (write_file's
//!   `content`, edit_file's `oldText`/`newText`, git_commit's `message`, echo's `message`,
//!   gzip-file-as-resource's `data`, which may be a data URI). Sound advice, but hardening, and
//!   the server is where a size limit usually lives: pedantic.
//! - DESC-002: git_checkout's "Switches branches" is short but says what the tool does: wrong.
//! - DESC-003: right where the name leaves the model guessing (`path`: relative to what?
//!   `target`, `files`, `pattern`, `excludePatterns`); wrong where the name says it all
//!   (`context_lines`, `max_count`, `branch_name`, `message`, `content`) or the items carry the
//!   descriptions (memory's `entities`, `relations`, `observations`, `deletions`): style.
//!
//! With the default set, the six servers get only SCH-002 findings (each judged right), and
//! after `--fix` none at all.

/// Declare each rule module and list its rule in [`RULES`], in code order; each rule gets a
/// snapshot test over its fixture.
macro_rules! register_rules {
    ($($module:ident::$rule:ident),* $(,)?) => {
        $(pub mod $module;)*

        /// Every rule, in code order.
        pub static RULES: &[&crate::lint::Rule] = &[$(&$module::$rule),*];

        #[cfg(test)]
        mod snapshot_tests {
            $(
                #[test]
                fn $module() {
                    crate::lint::snapshot::assert_fixture(&super::$module::$rule);
                }
            )*
        }
    };
}

register_rules! {
    missing_required::MISSING_REQUIRED,
    open_object::OPEN_OBJECT,
    untyped_property::UNTYPED_PROPERTY,
    unbounded_size::UNBOUNDED_SIZE,
    input_not_object::INPUT_NOT_OBJECT,
    unsupported_dialect::UNSUPPORTED_DIALECT,
    meta_schema::META_SCHEMA,
    unresolved_ref::UNRESOLVED_REF,
    undeclared_required::UNDECLARED_REQUIRED,
    array_without_items::ARRAY_WITHOUT_ITEMS,
    nonstandard_format::NONSTANDARD_FORMAT,
    contradiction::CONTRADICTION,
    lightweight_shape::LIGHTWEIGHT_SHAPE,
    open_no_arguments::OPEN_NO_ARGUMENTS,
    invalid_name::INVALID_NAME,
    name_clients_reject::NAME_CLIENTS_REJECT,
    duplicate_name::DUPLICATE_NAME,
    invalid_field::INVALID_FIELD,
    missing_description::MISSING_DESCRIPTION,
    weak_description::WEAK_DESCRIPTION,
    property_description::PROPERTY_DESCRIPTION,
    output_not_object::OUTPUT_NOT_OBJECT,
    hidden_characters::HIDDEN_CHARACTERS,
    model_instructions::MODEL_INSTRUCTIONS,
    secret_paths::SECRET_PATHS,
    tool_shadowing::TOOL_SHADOWING,
    confusable_name::CONFUSABLE_NAME,
    long_description::LONG_DESCRIPTION,
    provider_name::PROVIDER_NAME,
    provider_refuses::PROVIDER_REFUSES,
    provider_drops_keyword::PROVIDER_DROPS_KEYWORD,
    provider_widens::PROVIDER_WIDENS,
    strict_reshapes::STRICT_RESHAPES,
    provider_rewrites::PROVIDER_REWRITES,
    provider_requires::PROVIDER_REQUIRES,
}
