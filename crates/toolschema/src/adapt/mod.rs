//! Tools every model provider accepts, with nothing lost silently.
//!
//! A provider takes a tool's `inputSchema` only in its own dialect: OpenAI rejects arrays without
//! `items`, strict mode needs every object closed and every property required, Anthropic wants
//! an object root, Gemini's `parameters` is an OpenAPI 3.0 subset. [`adapt`] rewrites each tool
//! for one [`Profile`] (the provider's rules as data, each with its source), reports every place
//! where the result accepts more or less than the original ([`Loss`]), and refuses, with the
//! reason, what cannot be rewritten soundly. What the model sends back goes through
//! [`AdaptedTool::restore_arguments`], which undoes the reshaping and checks the result against
//! the original schema.
//!
//! ```
//! use serde_json::json;
//! use toolschema::adapt::{adapt, profile, LossAction};
//! use toolschema::Tool;
//!
//! let tool = Tool::from_value(json!({
//!     "name": "files.search",
//!     "inputSchema": {"type": "object", "properties": {
//!         "query": {"type": "string", "maxLength": 64},
//!         "limit": {"type": "integer"}
//!     }, "required": ["query"]}
//! }))?;
//! let strict = profile("openai-strict")?;
//! let adaptation = adapt(strict, [&tool]);
//! let adapted = &adaptation.tools()[0];
//! assert_eq!(adapted.name(), "files_search");
//! assert_eq!(adapted.schema()["properties"]["limit"], json!({"type": ["integer", "null"]}));
//! assert!(adapted.losses().iter().any(|l| l.action == LossAction::Renamed));
//!
//! // The model must send every property; null stands for "not given".
//! let restored = adaptation.restore("files_search", &json!({"query": "x", "limit": null}))?;
//! assert_eq!(restored.name, "files.search");
//! assert_eq!(restored.arguments, json!({"query": "x"}));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod describe;
mod limits;
mod loss;
pub mod names;
pub mod profile;
mod restore;
mod transform;

pub use loss::{Accepts, Loss, LossAction};
pub use profile::{
    profile, NameRule, Profile, UnknownProfile, PORTABLE_TOOL_NAME, PROFILES, PROFILE_NAMES,
};

pub(crate) use loss::Topic;

use crate::json::kind_in_words;
use crate::schema::normalize;
use crate::suggest::closest;
use crate::tool::Tool;
use crate::validate::{CompileError, ValidationErrors};
use profile::RequestFormat;
use restore::{Direction, Plan, Walker};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;

/// Why a tool cannot be adapted to a profile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tool '{tool}' cannot be adapted to {profile}{}: {message}", if .pointer.is_empty() { String::new() } else { format!(" at {}", .pointer) })]
pub struct AdaptError {
    /// The tool's original name.
    pub tool: String,
    /// The profile.
    pub profile: &'static str,
    /// JSON Pointer into the tool where the problem is (`/inputSchema/...`), or empty.
    pub pointer: String,
    /// What the provider would refuse, and why no rewrite is sound.
    pub message: String,
}

/// Why arguments could not be mapped back.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RestoreError {
    /// The name is neither a provider name nor an original name of the adapted tools.
    #[error("no tool named '{name}' was adapted{}", .suggestion.as_ref().map(|s| format!(" (did you mean '{s}'?)")).unwrap_or_default())]
    UnknownTool {
        /// The name given.
        name: String,
        /// The closest name.
        suggestion: Option<String>,
    },
    /// The arguments are not a JSON object.
    #[error("the arguments of a tool call must be a JSON object, not {0}")]
    NotAnObject(&'static str),
    /// Two arguments stand for one parameter of the original tool (its provider name and its
    /// original name): restoring both would lose one value.
    #[error(
        "the arguments of tool '{tool}' give parameter '{original}' more than once: as {}; \
         send it once, by the name the provider was given",
        .keys.iter().map(|k| format!("'{k}'")).collect::<Vec<_>>().join(" and ")
    )]
    NameCollision {
        /// The original tool name.
        tool: String,
        /// The original parameter name.
        original: String,
        /// The keys of the call that stand for it.
        keys: Vec<String>,
    },
    /// The tool cannot be adapted to the profile, so no call for it can come back.
    #[error(transparent)]
    Adapt(#[from] AdaptError),
    /// The original schema cannot be compiled.
    #[error(transparent)]
    Compile(#[from] CompileError),
    /// The restored arguments break the original schema.
    #[error("the arguments do not fit tool '{tool}':\n{errors}")]
    Invalid {
        /// The original tool name.
        tool: String,
        /// The restored arguments.
        arguments: Value,
        /// What the original schema says about them.
        errors: ValidationErrors,
    },
}

/// A tool call mapped back to the server's tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Restored {
    /// The server's name for the tool.
    pub name: String,
    /// Arguments the original schema accepts.
    pub arguments: Value,
}

/// A tool written for one provider.
#[derive(Debug, Clone)]
pub struct AdaptedTool<'t> {
    profile: &'static Profile,
    original: &'t Tool,
    name: String,
    schema: Value,
    losses: Vec<Loss>,
    plan: Plan,
}

impl<'t> AdaptedTool<'t> {
    /// The profile it was adapted to.
    pub fn profile(&self) -> &'static Profile {
        self.profile
    }

    /// The server's tool.
    pub fn original(&self) -> &'t Tool {
        self.original
    }

    /// The name the provider knows it by.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The adapted input schema.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Every place where it differs from the original.
    pub fn losses(&self) -> &[Loss] {
        &self.losses
    }

    /// The tool in the provider's request format (see [`RequestFormat`]).
    pub fn to_request(&self) -> Value {
        let mut fields = Map::new();
        fields.insert("name".into(), Value::String(self.name.clone()));
        if let Some(description) = self.original.description() {
            fields.insert("description".into(), Value::String(description.to_string()));
        }
        match self.profile.request {
            RequestFormat::OpenAiFunction { strict } => {
                fields.insert("parameters".into(), self.schema.clone());
                if strict {
                    fields.insert("strict".into(), Value::Bool(true));
                }
                json!({"type": "function", "function": Value::Object(fields)})
            }
            RequestFormat::Anthropic => {
                fields.insert("input_schema".into(), self.schema.clone());
                Value::Object(fields)
            }
            RequestFormat::GeminiJsonSchema => {
                fields.insert("parametersJsonSchema".into(), self.schema.clone());
                Value::Object(fields)
            }
            RequestFormat::GeminiOpenApi => {
                fields.insert("parameters".into(), self.schema.clone());
                Value::Object(fields)
            }
        }
    }

    /// Turn what a model sent for the adapted schema into what the server's schema expects:
    /// `null`s that stand for "not given" removed (a null for an optional argument whose
    /// original schema takes null itself is kept where the original takes it: it may be meant),
    /// parameters renamed back; then validate the result against the original schema.
    pub fn restore_arguments(&self, arguments: &Value) -> Result<Value, RestoreError> {
        let Some(members) = arguments.as_object() else {
            return Err(RestoreError::NotAnObject(kind_in_words(arguments)));
        };
        if let Some((original, keys)) = self.plan.name_collision(members) {
            return Err(RestoreError::NameCollision {
                tool: self.original.name().to_string(),
                original,
                keys,
            });
        }
        let walk = |direction, choices: &[usize], keep: &BTreeSet<String>| {
            let mut restored = arguments.clone();
            let walked = Walker {
                schema: &self.schema,
                plan: &self.plan,
                direction,
            }
            .run_keeping(&mut restored, choices, keep);
            (restored, walked)
        };
        let compiled = self.original.compile()?;
        let none = BTreeSet::new();
        // A null strict mode added for an optional property stands for "not given" only where
        // the original schema does not take a null; where it does, the null may be meant
        // ("clear this"), and it is kept.
        let keep_accepted = |choices: &[usize], reading: Option<Value>, dropped: Vec<String>| {
            keep_accepted_nulls(reading, dropped, |keep| {
                let (candidate, _) = walk(Direction::Restore, choices, keep);
                compiled.validate_input(&candidate).map(|()| candidate)
            })
        };
        let (restored, first) = walk(Direction::Restore, &[], &none);
        let mut met = first.met;
        let errors = match compiled.validate_input(&restored) {
            Ok(()) => {
                let kept = keep_accepted(&[], Some(restored.clone()), first.dropped);
                return Ok(kept.unwrap_or(restored));
            }
            Err(errors) => errors,
        };
        // A null the original takes may be what makes the call valid (an argument one form of
        // the original requires, that takes null).
        if let Some(kept) = keep_accepted(&[], None, first.dropped) {
            return Ok(kept);
        }
        // A null the original requires (a property one merged form requires and another does
        // not) is kept when that is what makes the call valid. Keeping every null changes
        // nothing a branch choice could, so this is one try.
        let (kept, _) = walk(Direction::RestoreKeepingNulls, &[], &none);
        if kept != restored && compiled.validate_input(&kept).is_ok() {
            return Ok(kept);
        }
        // Where several `anyOf` branches of the adapted schema fit a value (all-null members fit
        // most forms), the original schema decides which reading is meant: the other readings
        // are tried in order until one is valid there, up to a bound; the first one's errors
        // are reported.
        let mut choices = Vec::new();
        for _ in 1..MAX_READINGS {
            let Some(next) = restore::next_choices(&choices, &met) else {
                break;
            };
            choices = next;
            let (reading, now) = walk(Direction::Restore, &choices, &none);
            let valid = compiled.validate_input(&reading).is_ok().then_some(reading);
            if let Some(kept) = keep_accepted(&choices, valid, now.dropped) {
                return Ok(kept);
            }
            met = now.met;
        }
        let arguments = restored;
        Err(RestoreError::Invalid {
            tool: self.original.name().to_string(),
            arguments,
            errors,
        })
    }

    /// The arguments a model would send for the adapted schema in place of `arguments` (which
    /// fit the original): optional properties strict mode requires sent as `null`, parameters
    /// renamed, and properties a closed object does not declare left out. The inverse of
    /// [`AdaptedTool::restore_arguments`] where the adaptation lost nothing.
    pub fn shape_arguments(&self, arguments: &Value) -> Value {
        let mut shaped = arguments.clone();
        Walker {
            schema: &self.schema,
            plan: &self.plan,
            direction: Direction::Shape,
        }
        .run(&mut shaped);
        shaped
    }
}

/// Most readings of a call [`AdaptedTool::restore_arguments`] tries, where `anyOf` branches of
/// the adapted schema fit a value several ways.
const MAX_READINGS: usize = 64;

/// Most rounds of [`keep_accepted_nulls`] that put back every dropped null not yet refused.
const MAX_NULL_ROUNDS: usize = 8;

/// Most single nulls [`keep_accepted_nulls`] then tries one by one.
const MAX_NULL_TRIES: usize = 64;

/// A reading of the call the original schema takes, with every null of an optional property
/// the original takes itself (dropped from the reading at `dropped`) put back where the
/// original takes it; `reading` is that reading without them, when the original takes it.
/// `try_keeping` restores the call again keeping the nulls at the places given, and validates
/// it. `None` when no reading tried is valid.
///
/// First all of them at once, less those the original refuses at their own place, until the
/// call is valid (one round when every null is taken); then one at a time, in order, up to a
/// bound: from a valid `reading`, those not refused yet; without one, every null. Past the
/// bound the rest stand for "not given", as strict mode reported.
fn keep_accepted_nulls(
    reading: Option<Value>,
    dropped: Vec<String>,
    try_keeping: impl Fn(&BTreeSet<String>) -> Result<Value, ValidationErrors>,
) -> Option<Value> {
    let mut keep: BTreeSet<String> = dropped.iter().cloned().collect();
    for _ in 0..MAX_NULL_ROUNDS {
        if keep.is_empty() {
            break;
        }
        let errors = match try_keeping(&keep) {
            Ok(kept) => return Some(kept),
            Err(errors) => errors,
        };
        let before = keep.len();
        keep.retain(|place| !errors.iter().any(|e| e.path == *place));
        if keep.len() == before {
            break;
        }
    }
    // Then one null at a time, each kept where the call stays valid with it. Where the call is
    // not valid without its nulls, every null is tried: under an `anyOf`, the branches that do
    // not take a null report errors at its place although the branch that needs it takes it.
    let candidates: Vec<String> = match reading {
        Some(_) => dropped.into_iter().filter(|p| keep.contains(p)).collect(),
        None => dropped,
    };
    let mut best = reading;
    let mut kept = BTreeSet::new();
    for place in candidates.into_iter().take(MAX_NULL_TRIES) {
        kept.insert(place.clone());
        match try_keeping(&kept) {
            Ok(candidate) => best = Some(candidate),
            Err(_) => {
                kept.remove(&place);
            }
        }
    }
    best
}

/// A catalog adapted to one profile.
#[derive(Debug, Clone)]
pub struct Adaptation<'t> {
    profile: &'static Profile,
    tools: Vec<AdaptedTool<'t>>,
    failures: Vec<AdaptError>,
}

impl<'t> Adaptation<'t> {
    /// The profile.
    pub fn profile(&self) -> &'static Profile {
        self.profile
    }

    /// The tools that could be adapted, in catalog order.
    pub fn tools(&self) -> &[AdaptedTool<'t>] {
        &self.tools
    }

    /// The tools that could not, with why.
    pub fn failures(&self) -> &[AdaptError] {
        &self.failures
    }

    /// Every loss, tool after tool.
    pub fn losses(&self) -> impl Iterator<Item = &Loss> {
        self.tools.iter().flat_map(|t| t.losses.iter())
    }

    /// Provider names that differ from the original: provider name -> original name.
    pub fn names(&self) -> Map<String, Value> {
        self.tools
            .iter()
            .filter(|t| t.name != t.original.name())
            .map(|t| (t.name.clone(), Value::String(t.original.name().to_string())))
            .collect()
    }

    /// The adapted tool a provider name (or, failing that, an original name) stands for.
    pub fn tool(&self, name: &str) -> Option<&AdaptedTool<'t>> {
        self.tools
            .iter()
            .find(|t| t.name == name)
            .or_else(|| self.tools.iter().find(|t| t.original.name() == name))
    }

    /// Map a call the model made (provider name, arguments) back to the server's tool.
    pub fn restore(&self, name: &str, arguments: &Value) -> Result<Restored, RestoreError> {
        let Some(tool) = self.tool(name) else {
            // A tool the provider was never given: say why it was left out.
            if let Some(failure) = self.failures.iter().find(|f| f.tool == name) {
                return Err(RestoreError::Adapt(failure.clone()));
            }
            let names = self.tools.iter().map(|t| t.name.as_str());
            return Err(RestoreError::UnknownTool {
                name: name.to_string(),
                suggestion: closest(name, names).map(str::to_string),
            });
        };
        Ok(Restored {
            name: tool.original.name().to_string(),
            arguments: tool.restore_arguments(arguments)?,
        })
    }

    /// `{"tools": [...request format...], "losses": [...], "names": {...}}` (what serializing
    /// the adaptation writes).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The tools in the provider's request format, as a list to serialize.
    pub fn requests(&self) -> Requests<'_, 't> {
        Requests(&self.tools)
    }
}

/// The tools of an [`Adaptation`] in request format; serialized one tool at a time, so a large
/// catalog is never copied whole.
pub struct Requests<'a, 't>(&'a [AdaptedTool<'t>]);

impl Serialize for Requests<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(AdaptedTool::to_request))
    }
}

/// `{"tools": [...], "losses": [...], "names": {...}}`, written as it goes.
impl Serialize for Adaptation<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Losses<'a, 't>(&'a Adaptation<'t>);
        impl Serialize for Losses<'_, '_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_seq(self.0.losses())
            }
        }
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("tools", &self.requests())?;
        map.serialize_entry("losses", &Losses(self))?;
        map.serialize_entry("names", &self.names())?;
        map.end()
    }
}

/// Adapt every tool to `profile`: names made valid and unique across the catalog, schemas
/// rewritten. A tool that cannot be adapted is left out and listed in
/// [`Adaptation::failures`].
pub fn adapt<'t>(
    profile: &'static Profile,
    tools: impl IntoIterator<Item = &'t Tool>,
) -> Adaptation<'t> {
    let tools: Vec<&'t Tool> = tools.into_iter().collect();
    let originals: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    let assigned = names::assign(&profile.tool_name.rule, &originals);
    let mut adapted = Vec::with_capacity(tools.len());
    let mut failures = Vec::new();
    for (tool, name) in tools.iter().zip(assigned) {
        let Some(name) = name else {
            failures.push(AdaptError {
                tool: tool.name().to_string(),
                profile: profile.name,
                pointer: "/name".into(),
                message: "another tool of the catalog has this name, so a call by name could \
                          not be mapped back"
                    .into(),
            });
            continue;
        };
        match adapt_named(profile, tool, name) {
            Ok(t) => adapted.push(t),
            Err(e) => failures.push(e),
        }
    }
    Adaptation {
        profile,
        tools: adapted,
        failures,
    }
}

/// Adapt one tool to `profile` (its name made valid on its own).
pub fn adapt_tool<'t>(
    profile: &'static Profile,
    tool: &'t Tool,
) -> Result<AdaptedTool<'t>, AdaptError> {
    let name = fixed_name(profile, tool.name()).unwrap_or_else(|| tool.name().to_string());
    adapt_named(profile, tool, name)
}

/// `name` made valid for the profile's tool-name rule on its own.
fn fixed_name(profile: &Profile, name: &str) -> Option<String> {
    names::assign(&profile.tool_name.rule, &[name])
        .pop()
        .flatten()
}

/// A loss the engine found in a tool's input schema, as the tool's loss at `pointer`.
fn tool_loss(tool: &str, pointer: String, loss: transform::SchemaLoss) -> Loss {
    Loss {
        tool: tool.to_string(),
        pointer,
        keyword: loss.keyword,
        action: loss.action,
        message: loss.message,
        accepts: loss.accepts,
        topic: loss.topic,
    }
}

/// Map arguments a model sent for `tool` adapted to `profile` back to what the tool's original
/// schema expects, and validate them there.
pub fn restore_arguments(
    profile: &'static Profile,
    tool: &Tool,
    arguments: &Value,
) -> Result<Value, RestoreError> {
    adapt_tool(profile, tool)?.restore_arguments(arguments)
}

fn adapt_named<'t>(
    profile: &'static Profile,
    tool: &'t Tool,
    name: String,
) -> Result<AdaptedTool<'t>, AdaptError> {
    let fail = |pointer: String, message: String| AdaptError {
        tool: tool.name().to_string(),
        profile: profile.name,
        pointer,
        message,
    };
    let empty = Value::Object(Map::new());
    let input = tool.fields().get("inputSchema").unwrap_or(&empty);
    let normalized = normalize(input).map_err(|e| fail("/inputSchema".into(), e.to_string()))?;
    let outcome = transform::adapt_schema(profile, &normalized.schema, normalized.dialect)
        .map_err(|r| fail(format!("/inputSchema{}", r.pointer), r.message))?;
    let mut losses = Vec::with_capacity(outcome.losses.len() + 1);
    if name != tool.name() {
        losses.push(name_loss(profile, tool.name(), &name));
    }
    for l in outcome.losses {
        let pointer = format!("/inputSchema{}", l.pointer);
        losses.push(tool_loss(tool.name(), pointer, l));
    }
    Ok(AdaptedTool {
        profile,
        original: tool,
        name,
        schema: outcome.schema,
        losses,
        plan: Plan {
            optional: outcome.optional,
            takes_null: outcome.takes_null,
            renamed: outcome.renamed,
        },
    })
}

fn name_loss(profile: &'static Profile, original: &str, name: &str) -> Loss {
    Loss {
        tool: original.to_string(),
        pointer: "/name".into(),
        keyword: "name".into(),
        action: LossAction::Renamed,
        message: format!(
            "{} tool names must match {}: '{original}' is sent as '{name}' (the names map gives \
             the original back)",
            profile.label(),
            profile.tool_name.rule.pattern()
        ),
        accepts: Accepts::Reshaped,
        topic: Topic::Name,
    }
}

/// What adapting one tool of a file to a profile finds, for the `COMPAT-*` lint rules: the
/// losses and, when it cannot be adapted, why. Pointers are relative to the tool.
pub(crate) struct Check {
    pub losses: Vec<Loss>,
    pub refusal: Option<(String, String)>,
}

/// Check one tool (its name, when it has one, and its standard input schema) against each
/// profile: the schema is read and checked against its meta-schema once for all of them.
pub(crate) fn check_all(
    profiles: &[&'static Profile],
    name: Option<&str>,
    input: &Value,
) -> Vec<(&'static Profile, Check)> {
    let tool_name = name.unwrap_or_default();
    let name_losses = |profile: &'static Profile| match name {
        Some(name) if !profile.tool_name.rule.accepts(name) => {
            let fixed = fixed_name(profile, name).unwrap_or_default();
            vec![name_loss(profile, name, &fixed)]
        }
        _ => Vec::new(),
    };
    let refused = |profile, pointer: &str, message: String| Check {
        losses: name_losses(profile),
        refusal: Some((format!("/inputSchema{pointer}"), message)),
    };
    // Checked for no provider (a lint run without targets), the schema is not even read.
    if profiles.is_empty() {
        return Vec::new();
    }
    let normalized = match normalize(input) {
        Ok(n) => n,
        Err(e) => {
            return profiles
                .iter()
                .map(|p| (*p, refused(p, "", e.to_string())))
                .collect()
        }
    };
    if let Err(r) = transform::check_input(&normalized.schema, normalized.dialect) {
        return profiles
            .iter()
            .map(|p| (*p, refused(p, &r.pointer, r.message.clone())))
            .collect();
    }
    let dialect = normalized.dialect;
    profiles
        .iter()
        .map(|&profile| {
            let check = match transform::adapt_checked(profile, &normalized.schema, dialect) {
                Ok(outcome) => {
                    let mut losses = name_losses(profile);
                    for l in outcome.losses {
                        let pointer = format!("/inputSchema{}", l.pointer);
                        losses.push(tool_loss(tool_name, pointer, l));
                    }
                    Check {
                        losses,
                        refusal: None,
                    }
                }
                Err(r) => refused(profile, &r.pointer, r.message),
            };
            (profile, check)
        })
        .collect()
}
