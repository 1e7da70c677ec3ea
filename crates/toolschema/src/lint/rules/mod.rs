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
    invalid_name::INVALID_NAME,
    name_clients_reject::NAME_CLIENTS_REJECT,
    duplicate_name::DUPLICATE_NAME,
    invalid_field::INVALID_FIELD,
    missing_description::MISSING_DESCRIPTION,
    weak_description::WEAK_DESCRIPTION,
    property_description::PROPERTY_DESCRIPTION,
    output_not_object::OUTPUT_NOT_OBJECT,
}
