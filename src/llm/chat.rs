//! The OpenAI chat-completions JSON, both ways: the body that asks for a summary, and the text
//! of the answer. Batch files and the endpoint client share it, so both send the same request
//! and read answers alike.

use super::SummaryRequest;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A chat-completions request body. Field order is the order written. Unknown fields are
/// refused on reading: the hash covers these fields only, so a body with more (a temperature,
/// say) is not the request its `custom_id` names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Body {
    pub model: String,
    pub messages: Vec<ChatMessage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(rename = "Message")] // the name serde's messages quote
pub(crate) struct ChatMessage {
    pub role: String,
    pub content: String,
}

impl Body {
    /// The prompt as the system message, the text summarised as the user message.
    pub fn of(request: &SummaryRequest) -> Body {
        Body {
            model: request.model.clone(),
            messages: vec![
                ChatMessage {
                    role: "system".into(),
                    content: request.prompt.clone(),
                },
                ChatMessage {
                    role: "user".into(),
                    content: request.input.clone(),
                },
            ],
            max_tokens: request.max_tokens,
        }
    }

    /// The request a body asks for, when it has the shape [`Body::of`] writes: a system
    /// message, then a user message.
    pub fn request(&self) -> Result<SummaryRequest, String> {
        match self.messages.as_slice() {
            [system, user] if system.role == "system" && user.role == "user" => {
                Ok(SummaryRequest {
                    prompt: system.content.clone(),
                    input: user.content.clone(),
                    model: self.model.clone(),
                    max_tokens: self.max_tokens,
                })
            }
            messages => Err(format!(
                "expected body.messages to be a system message then a user message, found {} messages with roles [{}]",
                messages.len(),
                messages
                    .iter()
                    .map(|m| m.role.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}

/// The summary's text in a chat-completions answer: `choices[0].message.content`, which must
/// be a non-empty string.
pub(crate) fn answer_text(body: &Value) -> Result<String, String> {
    match body.pointer("/choices/0/message/content") {
        Some(Value::String(text)) if !text.trim().is_empty() => Ok(text.clone()),
        Some(Value::String(_)) => {
            Err("the answer's text (choices[0].message.content) is empty".into())
        }
        Some(other) => Err(format!(
            "expected choices[0].message.content to be text, found {}",
            crate::quote::cut(&other.to_string(), crate::quote::QUOTE_CHARS)
        )),
        None => Err("the answer has no choices[0].message.content".into()),
    }
}

/// What an error answer says, for a message: OpenAI's `error.message`, or the body itself, cut.
pub(crate) fn error_text(body: &str) -> String {
    let message = serde_json::from_str::<Value>(body).ok().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.pointer("/message"))
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    let text = message.unwrap_or_else(|| body.trim().to_string());
    if text.is_empty() {
        "no message".into()
    } else {
        crate::quote::cut(&text, crate::quote::QUOTE_CHARS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_are_read_from_the_first_choice() {
        let ok = json!({"choices": [{"message": {"role": "assistant", "content": "S"}}]});
        assert_eq!(answer_text(&ok).unwrap(), "S");
        let null = json!({"choices": [{"message": {"content": null}}]});
        assert!(answer_text(&null).unwrap_err().contains("found null"));
        let empty = json!({"choices": [{"message": {"content": " "}}]});
        assert!(answer_text(&empty).unwrap_err().contains("empty"));
        assert!(answer_text(&json!({"choices": []}))
            .unwrap_err()
            .contains("has no"));
    }

    #[test]
    fn error_bodies_give_their_message() {
        assert_eq!(error_text(r#"{"error":{"message":"bad key"}}"#), "bad key");
        assert_eq!(error_text("  Internal error\n"), "Internal error");
        assert_eq!(error_text(""), "no message");
    }
}
