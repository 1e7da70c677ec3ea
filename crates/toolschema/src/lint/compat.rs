//! What the `COMPAT-*` rules share: the tool adapted to each target profile (once per tool, for
//! every rule of the family), and findings grouped across targets, so that what several
//! providers do alike is one finding naming them all.

use super::context::{Report, ToolContext};
use crate::adapt::{self, Loss, Profile, Topic};
use crate::json::pointer::push_segment;
use crate::json::Members;

/// Stands for the providers' names in a message while findings are grouped.
const PROVIDERS: &str = "\u{1}";

/// A finding for one or more targets: one place, one keyword, said once, with what each
/// provider does there.
pub(crate) struct Group {
    /// JSON Pointer into the tool of the value the finding is about.
    pub pointer: String,
    /// The keyword, when the finding is about one.
    pub keyword: Option<String>,
    /// Each message, with [`PROVIDERS`] where the providers' names go, and the targets it holds
    /// for.
    parts: Vec<(String, Vec<&'static Profile>)>,
}

impl Group {
    /// The message, naming every target it holds for: `OpenAI (openai, openai-strict) and
    /// Gemini (gemini) do not read ...`. Where providers do different things at the same place,
    /// one sentence says each, the words they share said once: `$schema "..." is left out:
    /// OpenAI (openai-strict) reads ...; Gemini (gemini-openapi) reads ...`.
    pub fn message(&self) -> String {
        let messages: Vec<String> = self
            .parts
            .iter()
            .map(|(template, providers)| fill(template, providers))
            .collect();
        let Some((first, rest)) = messages.split_first() else {
            return String::new();
        };
        // The words before the first ": " that every message shares are said once.
        let shared = first
            .find(": ")
            .map(|at| &first[..at + 2])
            .filter(|prefix| rest.iter().all(|m| m.starts_with(prefix)))
            .unwrap_or("");
        let mut out = first.clone();
        for message in rest {
            out.push_str("; ");
            out.push_str(&message[shared.len()..]);
        }
        out
    }
}

/// `template` with the providers named where [`PROVIDERS`] stands: one provider with its
/// targets (`OpenAI (openai, openai-strict)`), several joined as a list is (`A, B and C`), and
/// then the verb that follows agrees (`do not read`, `read`, `have`).
fn fill(template: &str, providers: &[&'static Profile]) -> String {
    let mut by_provider: Vec<(&str, Vec<&str>)> = Vec::new();
    for profile in providers {
        match by_provider
            .iter_mut()
            .find(|(p, _)| *p == profile.provider())
        {
            Some((_, names)) => names.push(profile.name),
            None => by_provider.push((profile.provider(), vec![profile.name])),
        }
    }
    let named: Vec<String> = by_provider
        .iter()
        .map(|(provider, names)| format!("{provider} ({})", names.join(", ")))
        .collect();
    let list = match named.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, others)) => format!("{} and {last}", others.join(", ")),
        None => String::new(),
    };
    if named.len() < 2 {
        return template.replace(PROVIDERS, &list);
    }
    let mut out = String::with_capacity(template.len() + list.len());
    let mut pieces = template.split(PROVIDERS);
    out.push_str(pieces.next().unwrap_or_default());
    for piece in pieces {
        out.push_str(&list);
        match piece.strip_prefix(' ') {
            Some(after) => {
                let (word, rest) = after.split_at(after.find(' ').unwrap_or(after.len()));
                out.push(' ');
                out.push_str(&plural_verb(word));
                out.push_str(rest);
            }
            None => out.push_str(piece),
        }
    }
    out
}

/// The form a verb takes after several subjects: `does` `do`, `has` `have`, `is` `are`, `reads`
/// `read`, `closes` `close`. Any other word (a noun: `tool names`) is left as it is.
fn plural_verb(word: &str) -> std::borrow::Cow<'_, str> {
    match word {
        "does" => "do".into(),
        "has" => "have".into(),
        "is" => "are".into(),
        "was" => "were".into(),
        _ if ["ches", "shes", "sses", "xes", "zes"]
            .iter()
            .any(|end| word.ends_with(end)) =>
        {
            word[..word.len() - 2].to_string().into()
        }
        _ if word.len() > 2 && word.ends_with('s') && !word.ends_with("ss") => {
            word[..word.len() - 1].to_string().into()
        }
        _ => word.into(),
    }
}

/// Each target's check of the tool, made on first use.
fn checks<'c>(cx: &'c ToolContext<'_>) -> &'c [(&'static Profile, adapt::Check)] {
    cx.compat.get_or_init(|| {
        let Some(input) = cx
            .fields
            .and_then(|f| f.member("inputSchema"))
            .filter(|v| v.is_object())
        else {
            // No schema to adapt (TOOL-004 reports it).
            return Vec::new();
        };
        adapt::check_all(cx.targets, cx.name, input)
    })
}

/// Add one target's finding: to the group of its place and keyword, with the targets that say
/// the same there.
fn add(groups: &mut Vec<Group>, found: Group) {
    let Some(group) = groups
        .iter_mut()
        .find(|g| g.pointer == found.pointer && g.keyword == found.keyword)
    else {
        groups.push(found);
        return;
    };
    for (template, providers) in found.parts {
        match group.parts.iter_mut().find(|(t, _)| *t == template) {
            Some((_, known)) => known.extend(providers),
            None => group.parts.push((template, providers)),
        }
    }
}

/// The losses of `topic` over every target, grouped by place and message.
pub(crate) fn losses(cx: &ToolContext<'_>, topic: Topic) -> Vec<Group> {
    let mut groups = Vec::new();
    for (profile, check) in checks(cx) {
        let name = profile.label();
        for loss in check.losses.iter().filter(|l| l.topic == topic) {
            add(&mut groups, group_of(loss, profile, &name));
        }
    }
    groups
}

fn group_of(loss: &Loss, profile: &'static Profile, name: &str) -> Group {
    Group {
        pointer: loss.pointer.clone(),
        keyword: Some(loss.keyword.clone()),
        parts: vec![(loss.message.replace(name, PROVIDERS), vec![profile])],
    }
}

/// Why the tool cannot be adapted, over every target, grouped by place and message.
pub(crate) fn refusals(cx: &ToolContext<'_>) -> Vec<Group> {
    let mut groups = Vec::new();
    for (profile, check) in checks(cx) {
        let Some((pointer, message)) = &check.refusal else {
            continue;
        };
        let name = profile.label();
        let template = if message.contains(&name) {
            message.replace(&name, PROVIDERS)
        } else {
            format!("{PROVIDERS}: {message}")
        };
        add(
            &mut groups,
            Group {
                pointer: pointer.clone(),
                keyword: None,
                parts: vec![(template, vec![*profile])],
            },
        );
    }
    groups
}

/// Where a finding goes: the keyword's member when the file has it, else the deepest value on
/// the way there. Returns the file's JSON Pointer and the span index.
pub(crate) fn place(cx: &ToolContext<'_>, group: &Group) -> (String, usize) {
    let target = match &group.keyword {
        Some(keyword) if group.pointer != "/name" => push_segment(&group.pointer, keyword),
        _ => group.pointer.clone(),
    };
    let (span, found) = cx.deepest_span(&target);
    (format!("{}{found}", cx.tool.pointer), span)
}

/// Report every group as a finding without a fix.
pub(crate) fn report_all(cx: &ToolContext<'_>, report: &mut Report<'_>, groups: Vec<Group>) {
    for group in groups {
        let (pointer, span) = place(cx, &group);
        report.add(pointer, span, group.message());
    }
}
