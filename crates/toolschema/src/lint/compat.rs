//! What the `COMPAT-*` rules share: the tool adapted to each target profile (once per tool, for
//! every rule of the family), and findings grouped across targets, so that what several
//! providers do alike is one finding naming them all.

use super::context::{Report, ToolContext};
use crate::adapt::{self, Loss, Profile, Topic};
use crate::json::pointer::push_segment;
use crate::json::Members;

/// Stands for the providers' names in a message while findings are grouped.
const PROVIDERS: &str = "\u{1}";

/// A finding for one or more targets.
pub(crate) struct Group {
    /// JSON Pointer into the tool of the value the finding is about.
    pub pointer: String,
    /// The keyword, when the finding is about one.
    pub keyword: Option<String>,
    /// The message, with [`PROVIDERS`] where the providers' names go.
    template: String,
    /// The targets it holds for.
    providers: Vec<&'static Profile>,
}

impl Group {
    /// The message, naming every target it holds for: `OpenAI (openai, openai-strict) and
    /// Gemini (gemini)`.
    pub fn message(&self) -> String {
        let mut by_provider: Vec<(&str, Vec<&str>)> = Vec::new();
        for profile in &self.providers {
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
        self.template.replace(PROVIDERS, &named.join(" and "))
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

fn add(groups: &mut Vec<Group>, found: Group) {
    match groups.iter_mut().find(|g| {
        g.pointer == found.pointer && g.keyword == found.keyword && g.template == found.template
    }) {
        Some(group) => group.providers.extend(found.providers),
        None => groups.push(found),
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
        template: loss.message.replace(name, PROVIDERS),
        providers: vec![profile],
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
                template,
                providers: vec![*profile],
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
