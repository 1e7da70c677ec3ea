//! The providers' rules, as data: each profile says which keywords, formats, names, roots and
//! sizes a provider accepts, and where that is written down.
//!
//! The transformations in [`super`] and the `COMPAT-*` lint rules read these tables; nothing
//! about a provider is written anywhere else. Each rule carries its source next to it: a page of
//! the provider's documentation, the provider's own SDK (whose types are generated from its API
//! description), or a public report of the provider's error message where the documentation is
//! silent.

use std::fmt;

/// A provider rule with the place it is written down.
#[derive(Debug, Clone, Copy)]
pub struct Sourced<T> {
    /// The rule.
    pub rule: T,
    /// Where it comes from: a URL, and the sentence or error that states it.
    pub source: &'static str,
}

/// What a name (of a tool, or of a parameter) may look like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NameRule {
    /// Most characters.
    pub max_len: usize,
    /// Characters allowed besides ASCII letters and digits.
    pub extra: &'static str,
    /// Whether the first character must be an ASCII letter or `_`.
    pub letter_first: bool,
}

impl NameRule {
    /// Whether `c` may appear in a name.
    pub fn allows(&self, c: char) -> bool {
        c.is_ascii_alphanumeric() || self.extra.contains(c)
    }

    /// Whether `c` may start a name.
    pub fn allows_first(&self, c: char) -> bool {
        self.allows(c) && (!self.letter_first || c.is_ascii_alphabetic() || c == '_')
    }

    /// Whether `name` follows the rule.
    pub fn accepts(&self, name: &str) -> bool {
        let mut chars = name.chars();
        let Some(first) = chars.next() else {
            return false;
        };
        self.allows_first(first) && chars.all(|c| self.allows(c)) && name.len() <= self.max_len
    }

    /// The rule as a regular expression, for messages: `^[a-zA-Z0-9_-]{1,64}$`.
    pub fn pattern(&self) -> String {
        let extra: String = self
            .extra
            .chars()
            .map(|c| match c {
                '-' => "\\-".to_string(),
                c => c.to_string(),
            })
            .collect();
        if self.letter_first {
            format!("^[a-zA-Z_][a-zA-Z0-9{extra}]{{0,{}}}$", self.max_len - 1)
        } else {
            format!("^[a-zA-Z0-9{extra}]{{1,{}}}$", self.max_len)
        }
    }
}

/// The tool name every profile accepts: the strictest of their rules (64 characters as OpenAI,
/// ASCII letters, digits, `_` and `-`, and a letter or `_` first as Gemini).
pub const PORTABLE_TOOL_NAME: NameRule = NameRule {
    max_len: 64,
    extra: "_-",
    letter_first: true,
};

/// How the adapted tool is written in the provider's request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestFormat {
    /// Chat Completions: `{"type": "function", "function": {"name", "description",
    /// "parameters"}}`, with `"strict": true` in strict mode.
    OpenAiFunction {
        /// Structured outputs (`"strict": true`).
        strict: bool,
    },
    /// Messages API: `{"name", "description", "input_schema"}`.
    Anthropic,
    /// `FunctionDeclaration` with `parametersJsonSchema`.
    GeminiJsonSchema,
    /// `FunctionDeclaration` with `parameters` (the OpenAPI 3.0 subset).
    GeminiOpenApi,
}

/// What the schema's root may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RootRule {
    /// Whether `allOf`/`anyOf`/`oneOf` may sit at the root.
    pub composition: bool,
}

/// Which keywords a provider reads.
#[derive(Debug, Clone, Copy)]
pub enum Vocabulary {
    /// Every JSON Schema keyword (the provider takes any JSON Schema).
    Any,
    /// Only these keywords; anything else is dropped or moved into the description.
    Only(&'static [KeywordGroup]),
}

/// Keywords a provider documents together, with the source.
#[derive(Debug, Clone, Copy)]
pub struct KeywordGroup {
    /// The keywords.
    pub keywords: &'static [&'static str],
    /// Where they are listed.
    pub source: &'static str,
}

/// How a provider takes `$ref`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum References {
    /// Any local reference, with any keywords beside it.
    Any,
    /// Only references to `#` and `#/$defs/NAME`, and nothing but `$`-keywords beside a `$ref`.
    DefinitionsOnly,
    /// None: every reference is inlined.
    None,
}

/// How a provider takes `oneOf`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OneOf {
    /// As JSON Schema means it (exactly one branch).
    Supported,
    /// Read as `anyOf` by the provider, without a word.
    ReadAsAnyOf,
    /// Not at all.
    Unsupported,
}

/// Which `enum` values a provider takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnumValues {
    /// Any JSON values.
    Any,
    /// Strings and numbers.
    StringsAndNumbers,
    /// Strings only.
    Strings,
}

/// What structured outputs (`"strict": true`) require of every object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StrictObjects {
    /// Every object has `"additionalProperties": false`.
    pub closed: bool,
    /// Every property is in `required` (optional ones become nullable).
    pub all_required: bool,
    /// Arrays name their elements' type in `items`.
    pub typed_items: bool,
}

/// What a provider rejects when it is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Requirements {
    /// An array schema must have `items`.
    pub array_items: bool,
    /// An object schema must have `properties`.
    pub object_properties: bool,
    /// Every name in `required` must be declared in `properties`.
    pub declared_required: bool,
}

/// Size limits of one schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Object properties in the whole schema.
    pub properties: usize,
    /// Levels of nested objects.
    pub depth: usize,
    /// `enum` values in the whole schema.
    pub enum_values: usize,
    /// Characters of every property name, definition name, enum value and const value.
    pub total_string_length: usize,
    /// For one string `enum` of more than `large_enum` values: most characters of its values.
    pub large_enum: usize,
    /// See `large_enum`.
    pub large_enum_string_length: usize,
}

/// The dialect of the adapted schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputDialect {
    /// The schema as written, draft-07 or 2020-12.
    AsWritten,
    /// JSON Schema 2020-12 (draft-07 keywords translated).
    Draft202012,
    /// The OpenAPI 3.0 schema object subset (`nullable`, one `type`).
    OpenApi30,
}

/// One provider's rules.
#[derive(Debug)]
pub struct Profile {
    /// The name on the command line: `openai-strict`.
    pub name: &'static str,
    /// What it targets, in a few words.
    pub title: &'static str,
    /// How a tool is written in the request.
    pub request: RequestFormat,
    /// The dialect of the adapted schema.
    pub dialect: Sourced<OutputDialect>,
    /// Tool names.
    pub tool_name: Sourced<NameRule>,
    /// Names of the root's properties (the parameters), when the provider restricts them.
    pub parameter_name: Option<Sourced<NameRule>>,
    /// The root.
    pub root: Sourced<RootRule>,
    /// The keywords read.
    pub vocabulary: Vocabulary,
    /// The string formats accepted (`None`: any).
    pub formats: Option<Sourced<&'static [&'static str]>>,
    /// Whether `type` may be a list of types.
    pub type_lists: Sourced<bool>,
    /// `$ref`.
    pub references: Sourced<References>,
    /// `oneOf`.
    pub one_of: Sourced<OneOf>,
    /// `enum` values.
    pub enum_values: Sourced<EnumValues>,
    /// Structured-output rules, for a strict profile.
    pub strict: Option<Sourced<StrictObjects>>,
    /// What must not be missing.
    pub requirements: Sourced<Requirements>,
    /// Size limits.
    pub limits: Option<Sourced<Limits>>,
}

impl Profile {
    /// Whether the provider reads `keyword`.
    pub fn supports(&self, keyword: &str) -> bool {
        match self.vocabulary {
            Vocabulary::Any => true,
            Vocabulary::Only(groups) => groups.iter().any(|g| g.keywords.contains(&keyword)),
        }
    }

    /// Where the provider's keyword list is written, for messages.
    pub fn vocabulary_source(&self) -> &'static str {
        match self.vocabulary {
            Vocabulary::Any => "",
            Vocabulary::Only(groups) => groups.first().map_or("", |g| g.source),
        }
    }

    /// Whether the provider accepts the string format `format`.
    pub fn accepts_format(&self, format: &str) -> bool {
        self.formats.is_none_or(|f| f.rule.contains(&format))
    }

    /// Whether the adapted schema is the OpenAPI subset.
    pub fn is_openapi(&self) -> bool {
        self.dialect.rule == OutputDialect::OpenApi30
    }

    /// The provider, for messages: `OpenAI`, `Anthropic`, `Gemini`.
    pub fn provider(&self) -> &'static str {
        match self.request {
            RequestFormat::OpenAiFunction { .. } => "OpenAI",
            RequestFormat::Anthropic => "Anthropic",
            RequestFormat::GeminiJsonSchema | RequestFormat::GeminiOpenApi => "Gemini",
        }
    }

    /// The provider and the profile, as every message names them: `OpenAI (openai-strict)`.
    pub fn label(&self) -> String {
        format!("{} ({})", self.provider(), self.name)
    }
}

impl PartialEq for Profile {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for Profile {}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// A profile name that names no profile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown profile '{name}': use {}{}", PROFILE_NAMES.join(", "), .suggestion.as_ref().map(|s| format!(" (did you mean '{s}'?)")).unwrap_or_default())]
pub struct UnknownProfile {
    /// What was written.
    pub name: String,
    /// The closest profile name.
    pub suggestion: Option<&'static str>,
}

/// The profile named `name` (any case).
pub fn profile(name: &str) -> Result<&'static Profile, UnknownProfile> {
    let wanted = name.trim().to_ascii_lowercase();
    PROFILES
        .iter()
        .copied()
        .find(|p| p.name == wanted)
        .ok_or_else(|| UnknownProfile {
            name: name.to_string(),
            suggestion: crate::suggest::closest(&wanted, PROFILE_NAMES.iter().copied()),
        })
}

/// Every profile name, in the order of [`PROFILES`].
pub const PROFILE_NAMES: [&str; 5] = [
    "openai",
    "openai-strict",
    "anthropic",
    "gemini",
    "gemini-openapi",
];

/// Every profile.
pub static PROFILES: [&Profile; 5] = [
    &OPENAI,
    &OPENAI_STRICT,
    &ANTHROPIC,
    &GEMINI,
    &GEMINI_OPENAPI,
];

// ---------------------------------------------------------------------------------------------
// Sources shared by several rules.

const OPENAI_FUNCTION_NAME: &str = "openai-python types/shared_params/function_definition.py, \
    FunctionDefinition.name (generated from OpenAI's API description): \"Must be a-z, A-Z, 0-9, or \
    contain underscores and dashes, with a maximum length of 64.\"";

const OPENAI_STRUCTURED_OUTPUTS: &str =
    "https://platform.openai.com/docs/guides/structured-outputs#supported-schemas";

const OPENAI_NON_STRICT_REQUIREMENTS: &str = "OpenAI API errors \"In context=('properties', 'x'), \
    array schema missing items\" and \"object schema missing properties\" \
    (github.com/spring-projects/spring-ai/issues/2561, \
    github.com/github/github-mcp-server/issues/1548, \
    github.com/streamnative/streamnative-mcp-server/issues/26)";

const OPENAI_ROOT: &str = "https://platform.openai.com/docs/guides/structured-outputs: \"Root \
    objects must not be anyOf and must be an object\"; function parameters are \"described as a \
    JSON Schema object\" (openai-python FunctionDefinition.parameters)";

const ANTHROPIC_TOOL_DEFINITION: &str =
    "https://docs.claude.com/en/docs/agents-and-tools/tool-use/define-tools";

const GEMINI_JSON_SCHEMA_KEYWORDS: &str = "https://ai.google.dev/api/caching#Schema, the JSON \
    Schema fields (parametersJsonSchema, responseJsonSchema): \"Only the following properties are \
    supported: $id, $defs, $ref, $anchor, type, format, title, description, enum (for strings and \
    numbers), items, prefixItems, minItems, maxItems, minimum, maximum, anyOf, oneOf (interpreted \
    the same as anyOf), properties, additionalProperties, required. The non-standard \
    propertyOrdering property may also be set.\"";

const GEMINI_REQUIRED: &str = "Gemini API error for required names missing from properties \
    (github.com/zed-industries/zed/issues/44875)";

const GEMINI_OPENAPI_SCHEMA: &str = "https://ai.google.dev/api/caching#Schema (the OpenAPI 3.0 \
    subset of FunctionDeclaration.parameters) and google-genai types.Schema: type, format, title, \
    description, nullable, enum, maxItems, minItems, properties, required, minProperties, \
    maxProperties, minLength, maxLength, pattern, example, anyOf, propertyOrdering, default, \
    items, minimum, maximum";

// ---------------------------------------------------------------------------------------------
// The profiles.

/// OpenAI function tools without strict mode: any JSON Schema, but arrays need `items`, objects
/// need `properties`, and the root must be an object.
pub static OPENAI: Profile = Profile {
    name: "openai",
    title: "OpenAI function tools (Chat Completions, non-strict)",
    request: RequestFormat::OpenAiFunction { strict: false },
    dialect: Sourced {
        rule: OutputDialect::AsWritten,
        source: "function parameters are \"described as a JSON Schema object\" with no dialect \
                 named (openai-python FunctionDefinition.parameters)",
    },
    tool_name: Sourced {
        rule: NameRule {
            max_len: 64,
            extra: "_-",
            letter_first: false,
        },
        source: OPENAI_FUNCTION_NAME,
    },
    parameter_name: None,
    root: Sourced {
        rule: RootRule { composition: false },
        source: OPENAI_ROOT,
    },
    vocabulary: Vocabulary::Any,
    formats: None,
    type_lists: Sourced {
        rule: true,
        source: OPENAI_STRUCTURED_OUTPUTS,
    },
    references: Sourced {
        rule: References::Any,
        source: OPENAI_STRUCTURED_OUTPUTS,
    },
    one_of: Sourced {
        rule: OneOf::Supported,
        source: "not restricted outside strict mode",
    },
    enum_values: Sourced {
        rule: EnumValues::Any,
        source: "not restricted outside strict mode",
    },
    strict: None,
    requirements: Sourced {
        rule: Requirements {
            array_items: true,
            object_properties: true,
            declared_required: false,
        },
        source: OPENAI_NON_STRICT_REQUIREMENTS,
    },
    limits: None,
};

/// OpenAI structured outputs (`"strict": true`): a documented subset of JSON Schema, every object
/// closed, every property required.
pub static OPENAI_STRICT: Profile = Profile {
    name: "openai-strict",
    title: "OpenAI function tools with strict mode (structured outputs)",
    request: RequestFormat::OpenAiFunction { strict: true },
    dialect: Sourced {
        rule: OutputDialect::Draft202012,
        source: "https://platform.openai.com/docs/guides/structured-outputs: definitions are \
                 written `$defs` (\"Definitions are supported\")",
    },
    tool_name: Sourced {
        rule: NameRule {
            max_len: 64,
            extra: "_-",
            letter_first: false,
        },
        source: OPENAI_FUNCTION_NAME,
    },
    parameter_name: None,
    root: Sourced {
        rule: RootRule { composition: false },
        source: OPENAI_ROOT,
    },
    vocabulary: Vocabulary::Only(&[
        KeywordGroup {
            keywords: &[
                "type",
                "properties",
                "required",
                "additionalProperties",
                "items",
                "enum",
                "const",
                "anyOf",
                "$ref",
                "$defs",
                "description",
            ],
            source: "https://platform.openai.com/docs/guides/structured-outputs#supported-schemas: \
                     \"Supported types: String, Number, Boolean, Integer, Object, Array, Enum, \
                     anyOf\"; \"Definitions are supported\"; \"Recursive schemas are supported\"; \
                     const values count toward the string-size limit",
        },
        KeywordGroup {
            keywords: &["pattern", "format"],
            source: "https://platform.openai.com/docs/guides/structured-outputs#supported-properties: \
                     \"Supported string properties: pattern, format\"",
        },
        KeywordGroup {
            keywords: &["minLength", "maxLength"],
            source: "https://platform.openai.com/docs/guides/structured-outputs: \"For fine-tuned \
                     models, we additionally do not support: For strings: minLength, maxLength, \
                     ...\" (so other models do); pydantic-ai's OpenAI transformer keeps them",
        },
        KeywordGroup {
            keywords: &[
                "multipleOf",
                "maximum",
                "exclusiveMaximum",
                "minimum",
                "exclusiveMinimum",
            ],
            source: "https://platform.openai.com/docs/guides/structured-outputs#supported-properties: \
                     \"Supported number properties\"",
        },
        KeywordGroup {
            keywords: &["minItems", "maxItems"],
            source: "https://platform.openai.com/docs/guides/structured-outputs#supported-properties: \
                     \"Supported array properties: minItems, maxItems\"",
        },
        KeywordGroup {
            keywords: &["title"],
            source: "openai-python lib/_pydantic.py to_strict_json_schema keeps titles",
        },
    ]),
    formats: Some(Sourced {
        rule: &[
            "date-time",
            "time",
            "date",
            "duration",
            "email",
            "hostname",
            "ipv4",
            "ipv6",
            "uuid",
        ],
        source: "https://platform.openai.com/docs/guides/structured-outputs#supported-properties: \
                 format \"Currently supported: date-time, time, date, duration, email, hostname, \
                 ipv4, ipv6, uuid\"",
    }),
    type_lists: Sourced {
        rule: true,
        source: "https://platform.openai.com/docs/guides/structured-outputs: \"emulate an optional \
                 parameter by using a union type with null\" (\"type\": [\"string\", \"null\"])",
    },
    references: Sourced {
        rule: References::DefinitionsOnly,
        source: "https://platform.openai.com/docs/guides/structured-outputs: \"Definitions are \
                 supported\" (`#/$defs/...`, `#`); pydantic-ai's OpenAI transformer: a `$ref` may \
                 have no siblings and a pointer elsewhere is rejected in strict mode",
    },
    one_of: Sourced {
        rule: OneOf::Unsupported,
        source: "https://platform.openai.com/docs/guides/structured-outputs#supported-schemas: \
                 anyOf is the only composition supported",
    },
    enum_values: Sourced {
        rule: EnumValues::Any,
        source: OPENAI_STRUCTURED_OUTPUTS,
    },
    strict: Some(Sourced {
        rule: StrictObjects {
            closed: true,
            all_required: true,
            typed_items: true,
        },
        source: "https://platform.openai.com/docs/guides/structured-outputs: \"additionalProperties: \
                 false must always be set in objects\", \"All fields must be required\"; untyped \
                 items are refused (pydantic-ai issue 4425)",
    }),
    requirements: Sourced {
        rule: Requirements {
            array_items: true,
            object_properties: true,
            declared_required: false,
        },
        source: OPENAI_NON_STRICT_REQUIREMENTS,
    },
    limits: Some(Sourced {
        rule: Limits {
            properties: 5000,
            depth: 10,
            enum_values: 1000,
            total_string_length: 120_000,
            large_enum: 250,
            large_enum_string_length: 15_000,
        },
        source: "https://platform.openai.com/docs/guides/structured-outputs: \"A schema may have up \
                 to 5000 object properties total, with up to 10 levels of nesting\"; \"total string \
                 length of all property names, definition names, enum values, and const values \
                 cannot exceed 120,000 characters\"; \"up to 1000 enum values across all enum \
                 properties\"; \"For a single enum property with string values, the total string \
                 length of all enum values cannot exceed 15,000 characters when there are more \
                 than 250 enum values\"",
    }),
};

/// Anthropic's Messages API: `input_schema` is JSON Schema 2020-12 with an object root.
pub static ANTHROPIC: Profile = Profile {
    name: "anthropic",
    title: "Anthropic Messages API tools",
    request: RequestFormat::Anthropic,
    dialect: Sourced {
        rule: OutputDialect::Draft202012,
        source: "anthropic-sdk-python types/tool_param.py: input_schema is \"[JSON \
                 schema](https://json-schema.org/draft/2020-12) for this tool's input\"",
    },
    tool_name: Sourced {
        rule: NameRule {
            max_len: 128,
            extra: "_-",
            letter_first: false,
        },
        source: "https://docs.claude.com/en/docs/agents-and-tools/tool-use/define-tools: name \
                 \"Must match the regex ^[a-zA-Z0-9_-]{1,128}$\" (64 in earlier versions of the page)",
    },
    parameter_name: None,
    root: Sourced {
        rule: RootRule { composition: false },
        source: "anthropic-sdk-python InputSchemaTyped: `type: Required[Literal[\"object\"]]`; API \
                 error \"input_schema does not support oneOf, allOf, or anyOf at the top level\" \
                 (github.com/anthropics/claude-code/issues/586)",
    },
    vocabulary: Vocabulary::Any,
    formats: None,
    type_lists: Sourced {
        rule: true,
        source: ANTHROPIC_TOOL_DEFINITION,
    },
    references: Sourced {
        rule: References::Any,
        source: ANTHROPIC_TOOL_DEFINITION,
    },
    one_of: Sourced {
        rule: OneOf::Supported,
        source: ANTHROPIC_TOOL_DEFINITION,
    },
    enum_values: Sourced {
        rule: EnumValues::Any,
        source: ANTHROPIC_TOOL_DEFINITION,
    },
    strict: None,
    requirements: Sourced {
        rule: Requirements {
            array_items: false,
            object_properties: false,
            declared_required: false,
        },
        source: ANTHROPIC_TOOL_DEFINITION,
    },
    limits: None,
};

const GEMINI_NAME: NameRule = NameRule {
    max_len: 128,
    extra: "_.:-",
    letter_first: true,
};

const GEMINI_NAME_SOURCE: &str =
    "google-genai types.FunctionDeclaration.name: \"Must start with a \
    letter or an underscore. Must be a-z, A-Z, 0-9, or contain underscores, dots, colons and \
    dashes, with a maximum length of 128.\"";

/// Gemini's `parametersJsonSchema`: a documented subset of JSON Schema.
pub static GEMINI: Profile = Profile {
    name: "gemini",
    title: "Gemini function declarations with parametersJsonSchema",
    request: RequestFormat::GeminiJsonSchema,
    dialect: Sourced {
        rule: OutputDialect::Draft202012,
        source: GEMINI_JSON_SCHEMA_KEYWORDS,
    },
    tool_name: Sourced {
        rule: GEMINI_NAME,
        source: GEMINI_NAME_SOURCE,
    },
    parameter_name: None,
    root: Sourced {
        rule: RootRule { composition: false },
        source:
            "google-genai FunctionDeclaration.parameters_json_schema: \"The schema must describe \
                 an object where the properties are the parameters to the function\"",
    },
    vocabulary: Vocabulary::Only(&[KeywordGroup {
        keywords: &[
            "$id",
            "$defs",
            "$ref",
            "$anchor",
            "type",
            "format",
            "title",
            "description",
            "enum",
            "items",
            "prefixItems",
            "minItems",
            "maxItems",
            "minimum",
            "maximum",
            "anyOf",
            "properties",
            "additionalProperties",
            "required",
            "propertyOrdering",
        ],
        source: GEMINI_JSON_SCHEMA_KEYWORDS,
    }]),
    formats: None,
    type_lists: Sourced {
        rule: true,
        source: GEMINI_JSON_SCHEMA_KEYWORDS,
    },
    references: Sourced {
        rule: References::DefinitionsOnly,
        source: "https://ai.google.dev/api/caching#Schema: \"If $ref is set on a sub-schema, no \
                 other properties, except for those starting as a $, may be set.\"",
    },
    one_of: Sourced {
        rule: OneOf::ReadAsAnyOf,
        source: GEMINI_JSON_SCHEMA_KEYWORDS,
    },
    enum_values: Sourced {
        rule: EnumValues::StringsAndNumbers,
        source: GEMINI_JSON_SCHEMA_KEYWORDS,
    },
    strict: None,
    requirements: Sourced {
        rule: Requirements {
            array_items: false,
            object_properties: false,
            declared_required: true,
        },
        source: GEMINI_REQUIRED,
    },
    limits: None,
};

/// Gemini's `parameters`: the OpenAPI 3.0 schema subset.
pub static GEMINI_OPENAPI: Profile = Profile {
    name: "gemini-openapi",
    title: "Gemini function declarations with parameters (OpenAPI 3.0 subset)",
    request: RequestFormat::GeminiOpenApi,
    dialect: Sourced {
        rule: OutputDialect::OpenApi30,
        source: "google-genai FunctionDeclaration.parameters: \"Reflects the Open API 3.03 \
                 Parameter Object\"",
    },
    tool_name: Sourced {
        rule: GEMINI_NAME,
        source: GEMINI_NAME_SOURCE,
    },
    parameter_name: Some(Sourced {
        rule: NameRule {
            max_len: 64,
            extra: "_",
            letter_first: true,
        },
        source: "google-genai types.FunctionDeclaration.parameters: \"Parameter names must start \
                 with a letter or an underscore and must only contain chars a-z, A-Z, 0-9, or \
                 underscores with a maximum length of 64.\"",
    }),
    root: Sourced {
        rule: RootRule { composition: false },
        source: "google-genai FunctionDeclaration.parameters: \"the name of the parameter ... \
                 Schema Value\": the root is an OBJECT schema whose properties are the parameters",
    },
    vocabulary: Vocabulary::Only(&[KeywordGroup {
        keywords: &[
            "type",
            "format",
            "title",
            "description",
            "nullable",
            "enum",
            "maxItems",
            "minItems",
            "properties",
            "required",
            "minProperties",
            "maxProperties",
            "minLength",
            "maxLength",
            "pattern",
            "example",
            "anyOf",
            "propertyOrdering",
            "default",
            "items",
            "minimum",
            "maximum",
        ],
        source: GEMINI_OPENAPI_SCHEMA,
    }]),
    formats: None,
    type_lists: Sourced {
        rule: false,
        source: "google-genai types.Schema.type is one Type; a type list is refused \
                 (github.com/zed-industries/zed/issues/44875)",
    },
    references: Sourced {
        rule: References::None,
        source: GEMINI_OPENAPI_SCHEMA,
    },
    one_of: Sourced {
        rule: OneOf::Unsupported,
        source: GEMINI_OPENAPI_SCHEMA,
    },
    enum_values: Sourced {
        rule: EnumValues::Strings,
        source: "google-genai types.Schema.enum: Optional[list[str]]",
    },
    strict: None,
    requirements: Sourced {
        rule: Requirements {
            array_items: false,
            object_properties: false,
            declared_required: true,
        },
        source: GEMINI_REQUIRED,
    },
    limits: None,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_are_found_by_name() {
        for (p, name) in PROFILES.iter().zip(PROFILE_NAMES) {
            assert_eq!(p.name, name);
            assert_eq!(profile(&name.to_ascii_uppercase()).unwrap().name, name);
        }
        assert_eq!(
            profile("openai-stric").unwrap_err().to_string(),
            "unknown profile 'openai-stric': use openai, openai-strict, anthropic, gemini, \
             gemini-openapi (did you mean 'openai-strict'?)"
        );
    }

    #[test]
    fn name_rules() {
        let openai = OPENAI.tool_name.rule;
        assert!(openai.accepts("get_weather-2"));
        assert!(!openai.accepts("files.read"));
        assert!(!openai.accepts(""));
        assert!(!openai.accepts(&"a".repeat(65)));
        assert_eq!(openai.pattern(), "^[a-zA-Z0-9_\\-]{1,64}$");
        let gemini = GEMINI.tool_name.rule;
        assert!(gemini.accepts("files.read:v2"));
        assert!(!gemini.accepts("2fast"));
        assert_eq!(gemini.pattern(), "^[a-zA-Z_][a-zA-Z0-9_.:\\-]{0,127}$");
    }

    #[test]
    fn the_portable_name_is_accepted_everywhere() {
        let portable = PORTABLE_TOOL_NAME;
        for p in PROFILES {
            let rule = p.tool_name.rule;
            assert!(portable.max_len <= rule.max_len, "{}", p.name);
            assert!(
                portable.extra.chars().all(|c| rule.extra.contains(c)),
                "{}",
                p.name
            );
            assert!(portable.letter_first || !rule.letter_first, "{}", p.name);
        }
        assert_eq!(portable.pattern(), "^[a-zA-Z_][a-zA-Z0-9_\\-]{0,63}$");
    }

    #[test]
    fn every_rule_names_its_source() {
        for p in PROFILES {
            let sources = [
                p.dialect.source,
                p.tool_name.source,
                p.root.source,
                p.type_lists.source,
                p.references.source,
                p.one_of.source,
                p.enum_values.source,
                p.requirements.source,
            ];
            assert!(sources.iter().all(|s| !s.is_empty()), "{}", p.name);
            if let Vocabulary::Only(groups) = p.vocabulary {
                assert!(groups.iter().all(|g| !g.source.is_empty()));
            }
        }
    }
}
