//! What the session offers the LLM now: the catalog's rule ([`crate::catalog::offer`]) at this
//! session's device, active toolsets and screen.

use crate::catalog::ToolDefinition;
use crate::catalog::offer::{NotOffered, Offer};

use super::SessionCore;

impl SessionCore {
    /// The waypoints the screen is at; `None` when no offer depends on it (no shortcut) or the
    /// device cannot show its screen.
    fn here(&self) -> Option<Vec<String>> {
        if !self.catalog.has_shortcuts() {
            return None;
        }
        let snap = self.screen.snapshot().ok()?;
        Some(self.catalog.waypoints.matching(&snap, self.screen.platform()))
    }

    /// The definitions the LLM is sent now.
    pub fn offered(&self) -> Vec<ToolDefinition> {
        let active = self.active_toolsets.borrow().clone();
        let here = self.here();
        self.catalog.offered_definitions(&Offer {
            platform: self.screen.platform(),
            active: &active,
            here: here.as_deref(),
        })
    }

    /// Whether LLM-visible tool `name` is offered now, or why not (a caller that lists what it offers
    /// refuses the rest with this).
    pub fn offered_now(&self, name: &str) -> Result<(), String> {
        let Some(tool) = self.catalog.tool(name) else {
            return Ok(()); // the dispatcher answers an unknown name
        };
        let active = self.active_toolsets.borrow().clone();
        let here = self.here();
        let at = Offer {
            platform: self.screen.platform(),
            active: &active,
            here: here.as_deref(),
        };
        match self.catalog.offered(tool, &at) {
            // A shortcut may be called from elsewhere: its start check then says where it starts.
            Ok(()) | Err(NotOffered::NotAtStart(_)) => Ok(()),
            Err(why) => Err(why.explain(name)),
        }
    }
}
