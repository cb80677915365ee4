//! The view tree the simulated device shows: its current screen as [`ViewNode`]s, and hit testing.

use super::spec;
use super::{SCREEN_HEIGHT, SCREEN_WIDTH, SimDevice};
use crate::device::{Bounds, ViewNode, ViewTree};

impl SimDevice {
    /// The tree as the screen shows it now; `snapshot` counts, this does not.
    pub(super) fn tree(&self) -> ViewTree {
        let mut root = ViewNode {
            class_name: "android.widget.FrameLayout".to_owned(),
            bounds: Bounds {
                left: 0,
                top: 0,
                right: SCREEN_WIDTH,
                bottom: SCREEN_HEIGHT,
            },
            enabled: true,
            ..ViewNode::default()
        };
        let screen = match self.app.screens.get(self.state.current) {
            Some(screen) if self.state.foreground => screen,
            _ => {
                return ViewTree {
                    app_id: None,
                    width: SCREEN_WIDTH,
                    height: SCREEN_HEIGHT,
                    root,
                };
            }
        };
        root.children = screen.roots.iter().map(|&i| self.view(i)).collect();
        if let Some(message) = &self.state.message {
            root.children.push(ViewNode {
                class_name: "android.widget.TextView".to_owned(),
                text: Some(message.clone()),
                bounds: screen.banner,
                enabled: true,
                ..ViewNode::default()
            });
        }
        ViewTree {
            app_id: Some(self.app.id.clone()),
            width: SCREEN_WIDTH,
            height: SCREEN_HEIGHT,
            root,
        }
    }

    fn view(&self, i: usize) -> ViewNode {
        let s = self.state.current;
        let Some(node) = self.app.screens.get(s).and_then(|sc| sc.nodes.get(i)) else {
            return ViewNode::default();
        };
        let text = match self.current_text(i) {
            Some(t) if node.editable && t.is_empty() => None,
            Some(t) if node.password => Some("•".repeat(t.chars().count())),
            other => other.map(str::to_owned),
        };
        ViewNode {
            class_name: node.class.clone(),
            text,
            hint_text: node.hint.clone(),
            resource_id: node.id.as_ref().map(|id| format!("{}:id/{id}", self.app.id)),
            content_description: node.content_description.clone(),
            bounds: node.bounds,
            enabled: node.enabled,
            clickable: node.interactive(),
            editable: node.editable,
            focused: self.state.focus == Some(i),
            checked: node
                .checked
                .map(|c| self.state.checked.get(&(s, i)).copied().unwrap_or(c)),
            password: node.password,
            selected: false,
            scrollable: false,
            children: node.children.iter().map(|&c| self.view(c)).collect(),
        }
    }
}

/// Collects the path of nodes (outermost first) under (x, y); later siblings are on top.
pub(super) fn hit(nodes: &[spec::Node], ids: &[usize], x: i32, y: i32, path: &mut Vec<usize>) {
    for &i in ids.iter().rev() {
        let Some(node) = nodes.get(i) else { continue };
        if node.bounds.contains(x, y) {
            path.push(i);
            hit(nodes, &node.children, x, y, path);
            return;
        }
    }
}
