//! Graphs: nodes with dependencies, instantiated into an executable order and launched as
//! one stream item.

use crate::copy::{Copy3D, Fill2D};
use crate::errors::HipResult;
use crate::event::Event;
use crate::handles::HandleTable;
use crate::launch::PreparedLaunch;
use crate::stream::Stream;
use crate::types::*;
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

pub enum NodeOperation {
    Empty,
    Kernel(PreparedLaunch),
    Memset(Fill2D),
    Memcpy(Copy3D),
    EventRecord(Arc<Event>),
}

pub struct GraphNode {
    pub graph_id: u64,
    /// Position in its graph's node list.
    pub index: usize,
    pub operation: NodeOperation,
    /// Indices of the nodes this one depends on.
    pub dependencies: Vec<usize>,
}

pub struct Graph {
    pub id: u64,
    nodes: Mutex<Vec<Arc<GraphNode>>>,
}

pub struct GraphExec {
    /// Nodes in an order where every node comes after its dependencies.
    order: Vec<Arc<GraphNode>>,
}

pub fn graphs() -> &'static HandleTable<Graph> {
    static TABLE: OnceLock<HandleTable<Graph>> = OnceLock::new();
    TABLE.get_or_init(|| HandleTable::new(hipErrorInvalidValue))
}

pub fn nodes() -> &'static HandleTable<GraphNode> {
    static TABLE: OnceLock<HandleTable<GraphNode>> = OnceLock::new();
    TABLE.get_or_init(|| HandleTable::new(hipErrorInvalidValue))
}

pub fn execs() -> &'static HandleTable<GraphExec> {
    static TABLE: OnceLock<HandleTable<GraphExec>> = OnceLock::new();
    TABLE.get_or_init(|| HandleTable::new(hipErrorInvalidValue))
}

impl Graph {
    pub fn new() -> Arc<Graph> {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        Arc::new(Graph { id: NEXT_ID.fetch_add(1, Ordering::Relaxed), nodes: Mutex::new(Vec::new()) })
    }

    /// Adds a node after `dependency_handles` (which must be nodes of this graph) and returns
    /// its handle.
    pub fn add_node(&self, dependency_handles: &[usize], operation: NodeOperation) -> HipResult<usize> {
        let mut dependencies = Vec::with_capacity(dependency_handles.len());
        for handle in dependency_handles {
            let node = nodes().get(*handle)?;
            if node.graph_id != self.id {
                return Err(hipErrorInvalidValue);
            }
            if !dependencies.contains(&node.index) {
                dependencies.push(node.index);
            }
        }
        let mut graph_nodes = self.nodes.lock();
        let node = Arc::new(GraphNode { graph_id: self.id, index: graph_nodes.len(), operation, dependencies });
        graph_nodes.push(node.clone());
        Ok(nodes().insert(node))
    }

    pub fn node_count(&self) -> usize {
        self.nodes.lock().len()
    }

    /// `hipGraphDestroy`: the node handles die with the graph.
    pub fn destroy(&self) {
        let id = self.id;
        nodes().remove_where(|node| node.graph_id == id);
    }

    /// `hipGraphInstantiate`: a topological order (Kahn's algorithm; ties keep insertion order).
    pub fn instantiate(&self) -> HipResult<GraphExec> {
        let graph_nodes = self.nodes.lock().clone();
        let mut waiting_on: Vec<usize> = graph_nodes.iter().map(|node| node.dependencies.len()).collect();
        let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); graph_nodes.len()];
        for node in &graph_nodes {
            for dependency in &node.dependencies {
                dependents[*dependency].push(node.index);
            }
        }
        let mut ready: VecDeque<usize> = (0..graph_nodes.len()).filter(|i| waiting_on[*i] == 0).collect();
        let mut order = Vec::with_capacity(graph_nodes.len());
        while let Some(index) = ready.pop_front() {
            order.push(graph_nodes[index].clone());
            for dependent in &dependents[index] {
                waiting_on[*dependent] -= 1;
                if waiting_on[*dependent] == 0 {
                    ready.push_back(*dependent);
                }
            }
        }
        if order.len() != graph_nodes.len() {
            return Err(hipErrorInvalidValue);
        }
        Ok(GraphExec { order })
    }
}

impl GraphExec {
    pub fn node_count(&self) -> usize {
        self.order.len()
    }

    /// `hipGraphLaunch`: the whole graph runs as one item of `stream`, nodes in dependency
    /// order. A failing kernel stops the graph and becomes the device's sticky error.
    pub fn launch(self: &Arc<Self>, stream: &Stream) -> HipResult<()> {
        // Event-record nodes take their generation now, like hipEventRecord at launch time.
        let generations: Vec<Option<u64>> = self
            .order
            .iter()
            .map(|node| match &node.operation {
                NodeOperation::EventRecord(event) => Some(event.begin_record()),
                _ => None,
            })
            .collect();
        let exec = self.clone();
        let events_to_release: Vec<(Arc<Event>, u64)> = self
            .order
            .iter()
            .zip(&generations)
            .filter_map(|(node, generation)| match (&node.operation, generation) {
                (NodeOperation::EventRecord(event), Some(generation)) => Some((event.clone(), *generation)),
                _ => None,
            })
            .collect();
        let queued = stream
            .enqueue_fallible(move || {
                // After a kernel fails the remaining work is skipped, but event records still
                // complete so nothing waiting on them hangs; the error goes sticky.
                let mut failure = None;
                for (node, generation) in exec.order.iter().zip(generations) {
                    match &node.operation {
                        NodeOperation::EventRecord(event) => event.complete(generation.unwrap_or(0)),
                        _ if failure.is_some() => {}
                        NodeOperation::Empty => {}
                        NodeOperation::Kernel(launch) => failure = launch.run().err(),
                        NodeOperation::Memset(fill) => fill.run(),
                        NodeOperation::Memcpy(copy) => copy.run(),
                    }
                }
                failure.map_or(Ok(()), Err)
            })
            .map(|_| ());
        if queued.is_err() {
            // The graph will not run; complete its event records so waiters do not hang.
            for (event, generation) in events_to_release {
                event.complete(generation);
            }
        }
        queued
    }
}
