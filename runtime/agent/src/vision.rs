//! The agent's vision: the screen's picture sent beside its text, to models that take images.
//!
//! The picture is the report's screenshot (secret values scrubbed from an SVG before it is drawn),
//! rasterized or decoded ([`trailblaze_reports::raster`]), scaled down to what the provider takes without
//! scaling it again, the fields a secret was typed into painted over (pixels cannot be scrubbed),
//! and sent as PNG. Only the latest picture stays in the conversation: older screens are told by
//! their text, so a long objective does not pay for every picture again each turn.
//!
//! `auto` (the default) sends pictures and, when the provider refuses a request that holds one
//! (HTTP 400, 413, 415 or 422: a model without vision), goes on with the text alone for the rest
//! of the run; `on` makes that refusal the step's error; `off` never sends a picture.

use std::sync::atomic::{AtomicBool, Ordering};

use super::http::HttpError;
pub use super::provider::Image;
use super::provider::{ChatReply, ChatRequest, Message, Provider, ProviderError, ProviderKind, UserPart};
use trailblaze_core::device::Screenshot;
use trailblaze_core::session::Session;
use trailblaze_core::snapshot::SecretFields;
use trailblaze_reports::raster::{Fit, Picture};

/// Whether the model is sent the screen's picture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Vision {
    /// Sent, until the provider refuses one; then text only for the rest of the run.
    #[default]
    Auto,
    /// Sent; a provider that refuses it fails the step.
    On,
    /// Never sent.
    Off,
}

impl Vision {
    pub fn from_name(name: &str) -> Option<Vision> {
        match name.trim().to_ascii_lowercase().as_str() {
            "auto" => Some(Vision::Auto),
            "on" => Some(Vision::On),
            "off" => Some(Vision::Off),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Vision::Auto => "auto",
            Vision::On => "on",
            Vision::Off => "off",
        }
    }
}

impl Image {
    /// Tokens the provider counts for it, by its published rules.
    pub fn tokens(&self, kind: ProviderKind) -> u64 {
        image_tokens(kind, self.width, self.height)
    }
}

/// The largest picture each provider takes as it is. OpenAI (detail `high`) fits an image in a
/// 2048 square, then its short side to 768; Anthropic scales one whose long side passes 1568 or
/// whose area passes that of its largest square, 1092×1092 (about 1.19 megapixels).
pub fn fit(kind: ProviderKind) -> Fit {
    match kind {
        ProviderKind::OpenAi => Fit {
            long_side: 2048,
            short_side: 768,
            pixels: u64::MAX,
        },
        ProviderKind::Anthropic => Fit {
            long_side: 1568,
            short_side: 1568,
            pixels: 1092 * 1092,
        },
    }
}

/// Input tokens for a `width` × `height` picture by the provider's published rules: OpenAI (GPT-4o,
/// GPT-4.1, detail `high`) 85 plus 170 per 512-pixel tile after its scaling; Anthropic
/// width × height / 750.
pub fn image_tokens(kind: ProviderKind, width: u32, height: u32) -> u64 {
    let (w, h) = fit(kind).size(width, height);
    match kind {
        ProviderKind::OpenAi => 85 + 170 * u64::from(w.div_ceil(512)) * u64::from(h.div_ceil(512)),
        ProviderKind::Anthropic => (u64::from(w) * u64::from(h)).div_ceil(750),
    }
}

/// The session's current screen as a picture for `kind`'s models, the fields a secret was typed
/// into painted over.
pub fn screen_image(session: &Session, kind: ProviderKind) -> Result<Image, String> {
    let (shot, fields) = session.screenshot_and_secret_fields()?;
    picture_of(&shot, fields, kind)
}

/// A screenshot as a picture for `kind`'s models, `fields` painted over.
pub fn picture_of(shot: &Screenshot, fields: SecretFields, kind: ProviderKind) -> Result<Image, String> {
    let mut picture = Picture::from_screenshot(shot, fit(kind)).map_err(|e| e.to_string())?;
    for b in fields.bounds {
        picture.cover(b, fields.screen, MASK);
    }
    Ok(Image {
        mime: "image/png",
        data: picture.to_png().map_err(|e| e.to_string())?,
        width: picture.width(),
        height: picture.height(),
    })
}

/// What a field holding a secret looks like in a picture: a solid grey box.
pub const MASK: [u8; 3] = trailblaze_core::parts::SECRET_MASK;

/// The vision setting of one run, and whether `auto` has been refused already.
#[derive(Debug, Default)]
pub(crate) struct Eyes {
    vision: Vision,
    /// `auto`, after a provider refused a picture: text only from then on.
    blind: AtomicBool,
}

impl Eyes {
    pub(crate) fn new(vision: Vision) -> Eyes {
        Eyes {
            vision,
            blind: AtomicBool::new(false),
        }
    }

    pub(crate) fn sees(&self) -> bool {
        self.vision != Vision::Off && !self.blind.load(Ordering::Relaxed)
    }

    /// The screen's picture as a user part, when pictures are sent and it could be made (one that
    /// cannot be made is said in the log, and the turn goes on with the text).
    pub(crate) fn screen(&self, session: &Session, kind: ProviderKind) -> Option<UserPart> {
        if !self.sees() {
            return None;
        }
        match screen_image(session, kind) {
            Ok(image) => Some(UserPart::Image(image)),
            Err(e) => {
                tracing::warn!(error = %e, "no picture of the screen for the model this turn");
                None
            }
        }
    }

    /// Sends `req` with its latest picture only; under `auto`, a refusal of a request that held
    /// one is sent again without it, and no picture is sent for the rest of the run.
    pub(crate) fn complete(&self, provider: &dyn Provider, req: &ChatRequest<'_>) -> Result<ChatReply, ProviderError> {
        let messages = latest_image_only(req.messages, self.sees());
        let first = provider.complete(&ChatRequest {
            messages: &messages,
            ..*req
        });
        let refused = matches!(
            &first,
            Err(ProviderError::Http(HttpError::Status {
                status: 400 | 413 | 415 | 422,
                ..
            }))
        );
        if !(refused && self.vision == Vision::Auto && has_image(&messages)) {
            return first;
        }
        self.blind.store(true, Ordering::Relaxed);
        tracing::warn!(
            "the LLM provider refused a request with a picture of the screen: going on with the screen's text only \
             (--agent-vision on makes this an error, off never sends one)"
        );
        let text_only = latest_image_only(req.messages, false);
        provider.complete(&ChatRequest {
            messages: &text_only,
            ..*req
        })
    }
}

fn has_image(messages: &[Message]) -> bool {
    messages
        .iter()
        .any(|m| matches!(m, Message::User(parts) if parts.iter().any(|p| matches!(p, UserPart::Image(_)))))
}

/// The conversation with every picture but the latest dropped (all of them when `keep` is false).
pub(crate) fn latest_image_only(messages: &[Message], keep: bool) -> Vec<Message> {
    let last = messages
        .iter()
        .enumerate()
        .flat_map(|(i, m)| match m {
            Message::User(parts) => parts
                .iter()
                .enumerate()
                .filter(|(_, p)| matches!(p, UserPart::Image(_)))
                .map(|(j, _)| (i, j))
                .collect::<Vec<_>>(),
            Message::Assistant { .. } => Vec::new(),
        })
        .next_back()
        .filter(|_| keep);
    messages
        .iter()
        .enumerate()
        .map(|(i, m)| match m {
            Message::User(parts) => Message::User(
                parts
                    .iter()
                    .enumerate()
                    .filter(|(j, p)| !matches!(p, UserPart::Image(_)) || last == Some((i, *j)))
                    .map(|(_, p)| p.clone())
                    .collect(),
            ),
            other => other.clone(),
        })
        .collect()
}

/// Input tokens estimated for a request body that holds `messages`' pictures (a reply without
/// `usage`): the text at 4 characters a token, each picture by its provider's rule, not by its
/// base64 length.
pub(crate) fn estimated_input(kind: ProviderKind, body_len: usize, messages: &[Message]) -> u64 {
    let mut chars = body_len;
    let mut tokens = 0;
    for m in messages {
        if let Message::User(parts) = m {
            for p in parts {
                if let UserPart::Image(i) = p {
                    chars = chars.saturating_sub(i.data.len().div_ceil(3) * 4);
                    tokens += i.tokens(kind);
                }
            }
        }
    }
    super::provider::estimate_tokens(chars) + tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(n: u8) -> UserPart {
        UserPart::Image(Image {
            mime: "image/png",
            data: vec![n; 3],
            width: 10,
            height: 10,
        })
    }

    #[test]
    fn token_rules_follow_the_providers_published_examples() {
        // OpenAI's examples: 1024×1024 → 768×768, 4 tiles, 765 tokens; 2048×4096 → 768×1536, 6 tiles, 1105.
        assert_eq!(image_tokens(ProviderKind::OpenAi, 1024, 1024), 765);
        assert_eq!(image_tokens(ProviderKind::OpenAi, 2048, 4096), 1105);
        // Anthropic's: 1092×1092 ≈ 1590 tokens; 1000×1000 ≈ 1334.
        assert_eq!(image_tokens(ProviderKind::Anthropic, 1092, 1092), 1590);
        assert_eq!(image_tokens(ProviderKind::Anthropic, 1000, 1000), 1334);
        // The simulated screen as the agent sends it (360×800).
        assert_eq!(image_tokens(ProviderKind::OpenAi, 360, 800), 85 + 170 * 2);
        assert_eq!(image_tokens(ProviderKind::Anthropic, 360, 800), 384);
    }

    #[test]
    fn only_the_latest_picture_stays_and_none_when_blind() {
        let messages = vec![
            Message::User(vec![UserPart::Text("a".into()), image(1)]),
            Message::Assistant {
                text: None,
                calls: Vec::new(),
            },
            Message::User(vec![UserPart::Text("b".into()), image(2)]),
        ];
        let kept = latest_image_only(&messages, true);
        assert_eq!(kept[0], Message::User(vec![UserPart::Text("a".into())]));
        assert_eq!(kept[2], messages[2], "the latest stays");
        assert!(has_image(&kept));
        let none = latest_image_only(&messages, false);
        assert!(!has_image(&none));
        // Control: nothing but pictures is dropped.
        assert_eq!(none[2], Message::User(vec![UserPart::Text("b".into())]));
        assert_eq!(Vision::from_name(" ON "), Some(Vision::On));
        assert_eq!(Vision::from_name("maybe"), None);
    }

    #[test]
    fn a_picture_is_estimated_by_its_rule_not_its_base64() {
        let big = UserPart::Image(Image {
            mime: "image/png",
            data: vec![0; 30_000],
            width: 360,
            height: 800,
        });
        let messages = vec![Message::User(vec![UserPart::Text("x".into()), big])];
        // A 1,000-character body besides the 40,000 characters of base64.
        let est = estimated_input(ProviderKind::Anthropic, 41_000, &messages);
        assert_eq!(est, 250 + 384);
    }
}
