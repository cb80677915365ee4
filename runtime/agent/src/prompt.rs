//! What the model is told: short (it is sent with every request), and nothing it must not know (a
//! secret's name, never its value).

/// One step for the agent.
#[derive(Debug, Clone, Copy, Default)]
pub struct Objective<'a> {
    /// A `verify:` step: read-only tools only, concluded with an assertion and `objectiveStatus`.
    pub verify: bool,
    pub text: &'a str,
    pub trail_title: Option<&'a str>,
    pub trail_description: Option<&'a str>,
    /// The trail's `config.context`.
    pub context: Option<&'a str>,
    /// Self-heal: why the recorded calls failed.
    pub healing: Option<&'a str>,
    /// What the trail's earlier steps did, one line each (a prompt-only trail's steps build on it).
    pub before: Option<&'a str>,
}

/// The trailmap's `target.system_prompt_file`, added to the system prompt.
pub fn about_the_app(text: &str) -> String {
    format!("\nAbout the app under test:\n{}\n", text.trim())
}

/// The system prompt of every request for one objective.
pub fn system(verify: bool, secret_names: &[String]) -> String {
    let mut s = String::from(
        "You operate a mobile app through tools to reach one objective of a test.\n\
         - The screen is a list of nodes, each with a ref in brackets, e.g. [c422]. Pick elements by ref from the latest screen.\n\
         - Use as few calls as you can. After calls that change the screen you are sent the new screen.\n\
         - A failed call returns its error: read it and try again differently.\n\
         - When the objective is reached, call objectiveStatus with status COMPLETED and a one-line explanation; \
         if it cannot be reached, FAILED. Always end with objectiveStatus.\n",
    );
    if secret_names.is_empty() {
        s.push_str("- No secrets are set for this run.\n");
    } else {
        let names: Vec<String> = secret_names.iter().map(|n| format!("{{{{secret:{n}}}}}")).collect();
        s.push_str(&format!(
            "- Secrets are typed as placeholders, never as values (you are never shown one; a field holding one shows ***): {}.\n",
            names.join(", ")
        ));
    }
    if verify {
        s.push_str(
            "- This objective is a check, not an action: use only read-only tools (snapshot, assertVisible, \
             assertNotVisibleWithText, ...). First prove it with an assertion (assertVisible with the ref of the \
             node that shows it, or assertNotVisibleWithText), so a replay checks it again; then call objectiveStatus. \
             If it does not hold, call objectiveStatus with FAILED.\n",
        );
    }
    s
}

/// The first user message: the trail's context, the objective, the screen.
pub fn objective(o: &Objective<'_>, screen: &str) -> String {
    let mut s = String::new();
    match (o.trail_title, o.trail_description) {
        (Some(t), Some(d)) if t != d => s.push_str(&format!("Trail: {t} ({d})\n")),
        (Some(t), _) | (None, Some(t)) => s.push_str(&format!("Trail: {t}\n")),
        (None, None) => {}
    }
    if let Some(c) = o.context.filter(|c| !c.trim().is_empty()) {
        s.push_str(&format!("Context: {}\n", c.trim()));
    }
    if let Some(b) = o.before.filter(|b| !b.trim().is_empty()) {
        s.push_str(&format!("Steps done before this one:\n{}\n", b.trim_end()));
    }
    let kind = if o.verify { "Check" } else { "Objective" };
    s.push_str(&format!("{kind}: {}\n", o.text.trim()));
    if let Some(why) = o.healing {
        s.push_str(&format!(
            "The step's recorded calls failed ({why}); the screen may be part-way through the step. Finish it.\n"
        ));
    }
    s.push_str("\nThe screen:\n");
    s.push_str(screen.trim_end());
    s
}

/// Told when a reply had no tool call.
pub const NUDGE: &str = "Call a tool: act on the screen, or end with objectiveStatus.";
