//! Profiling sessions (`iree_hal_hip_rs::profiling`) on the software HIP device, below the
//! HAL: queue operations timed on a stream whose work takes a known time (a host function
//! sleeping on it), clock samples, and what a session keeps and gives back. The end-to-end
//! checks through IREE's tools are iree-harness/profiling/check_profiling.py.

mod common;

use common::*;
use iree_hal_hip_rs::hip::gpu::Gpu;
use iree_hal_hip_rs::hip::handles::Stream;
use iree_hal_hip_rs::hip::types::hipStreamNonBlocking;
use iree_hal_hip_rs::hip::HipSymbols;
use iree_hal_hip_rs::hip_call;
use iree_hal_hip_rs::profiling::records::*;
use iree_hal_hip_rs::profiling::{families, Batch, GpuDescription, Output, QueueSubmission, Session, SessionOptions};
use iree_hal_hip_rs::status::{Result, StatusCode};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn hip() -> Arc<HipSymbols> {
    let hip = HipSymbols::load(&[format!("file:{}", software_hip_library().display())]).unwrap();
    hip_call!(&hip, hipInit(0)).unwrap();
    Arc::new(hip)
}

/// What a session wrote, kept for the test.
#[derive(Default)]
struct Collected {
    begun: Vec<GpuDescription>,
    batches: Vec<Batch>,
    ended: Option<Option<StatusCode>>,
}

struct TestOutput(Arc<Mutex<Collected>>);

impl Output for TestOutput {
    fn begin(&mut self, _session_id: u64, gpus: &[GpuDescription]) -> Result<()> {
        self.0.lock().unwrap().begun = gpus.to_vec();
        Ok(())
    }
    fn write(&mut self, batch: Batch) -> Result<()> {
        self.0.lock().unwrap().batches.push(batch);
        Ok(())
    }
    fn end(&mut self, outcome: Option<StatusCode>) -> Result<()> {
        self.0.lock().unwrap().ended = Some(outcome);
        Ok(())
    }
}

fn session(gpus: &[Gpu], families: u64) -> (Arc<Session>, Arc<Mutex<Collected>>) {
    session_with(gpus, SessionOptions::new(families, Default::default()))
}

fn session_with(gpus: &[Gpu], options: SessionOptions) -> (Arc<Session>, Arc<Mutex<Collected>>) {
    let collected = Arc::new(Mutex::new(Collected::default()));
    let session = Session::begin(gpus, options, Box::new(TestOutput(collected.clone()))).unwrap();
    (session, collected)
}

fn submission(name: &'static str) -> QueueSubmission {
    QueueSubmission { name, gpu: 0, wait_count: 0, signal_count: 1, details: Default::default() }
}

/// Work of a known length on `stream`: a host function sleeping.
fn busy(hip: &HipSymbols, stream: &Stream, time: Duration) {
    iree_hal_hip_rs::hip::host_func::launch(hip, stream.raw(), time, std::thread::sleep).map_err(|(status, _)| status).unwrap();
}

#[test]
fn device_spans_measure_the_streams_work_in_order_on_the_clock_samples_timeline() {
    let hip = hip();
    let gpu = Gpu::retain(&hip, 0).unwrap();
    let stream = gpu.make_current().unwrap().create_stream(hipStreamNonBlocking).unwrap();
    let (session, collected) = session(std::slice::from_ref(&gpu), families::QUEUE_EVENTS | families::DEVICE_QUEUE_EVENTS);
    // Three operations: 30 ms, 0 ms and 10 ms of work.
    for (epoch, millis) in [(1u64, 30u64), (2, 0), (3, 10)] {
        let profile = session.operation(submission("queue_execute")).expect("the session records queue operations");
        profile.start(stream.raw()).unwrap();
        if millis > 0 {
            busy(&hip, &stream, Duration::from_millis(millis));
        }
        profile.finish(stream.raw()).unwrap();
        profile.issued(epoch);
    }
    session.end().unwrap();
    let collected = collected.lock().unwrap();
    assert_eq!(collected.ended, Some(None), "the session ends OK");
    assert_eq!(collected.begun.len(), 1);
    let spans: Vec<&DeviceSpanRecord> = collected.batches.iter().flat_map(|batch| &batch.device_spans).collect();
    let events: Vec<&QueueEventRecord> = collected.batches.iter().flat_map(|batch| &batch.queue_events).collect();
    let samples: Vec<&ClockSample> = collected.batches.iter().flat_map(|batch| &batch.clock_samples).collect();
    assert_eq!(spans.len(), 3);
    assert_eq!(events.len(), 3);
    assert_eq!(spans.iter().map(|span| span.submission_id).collect::<Vec<_>>(), [1, 2, 3]);
    assert!(events.iter().all(|event| event.op == QueueOpType::Execute && event.ready_host_time_ns >= event.host_time_ns));
    let durations: Vec<u64> = spans.iter().map(|span| span.end_tick - span.start_tick).collect();
    assert!(durations[0] >= 30_000_000, "the first span holds the 30 ms of work: {durations:?}");
    assert!(durations[1] < durations[0] && durations[2] >= 10_000_000 && durations[2] < durations[0], "{durations:?}");
    assert!(spans.windows(2).all(|pair| pair[1].start_tick >= pair[0].end_tick), "spans follow each other on the stream");
    // Begin and end sampled the clock: every span lies between the two samples.
    assert!(samples.len() >= 2, "{samples:?}");
    let (first, last) = (samples.first().unwrap(), samples.last().unwrap());
    assert!(first.device_tick > 0 && first.device_tick <= spans[0].start_tick && spans[2].end_tick <= last.device_tick, "{samples:?}");
    // Ticks are nanoseconds: the device's and the host's elapsed times agree within the
    // samples' brackets.
    let device_elapsed = (last.device_tick - first.device_tick) as i64;
    let host_elapsed = last.host_midpoint_ns() - first.host_midpoint_ns();
    let uncertainty = (first.host_time_end_ns - first.host_time_begin_ns) + (last.host_time_end_ns - last.host_time_begin_ns);
    assert!((device_elapsed - host_elapsed).abs() <= uncertainty + 2_000_000, "device {device_elapsed} ns vs host {host_elapsed} ns");
}

#[test]
fn a_flush_writes_what_completed_and_keeps_what_has_not() {
    let hip = hip();
    let gpu = Gpu::retain(&hip, 0).unwrap();
    let stream = gpu.make_current().unwrap().create_stream(hipStreamNonBlocking).unwrap();
    let (session, collected) = session(std::slice::from_ref(&gpu), families::DEVICE_QUEUE_EVENTS);
    let quick = session.operation(submission("queue_fill")).unwrap();
    quick.start(stream.raw()).unwrap();
    quick.finish(stream.raw()).unwrap();
    quick.issued(1);
    let (release, wait) = std::sync::mpsc::channel::<()>();
    // The second operation cannot complete until the test lets the stream go on.
    let slow = session.operation(submission("queue_copy")).unwrap();
    slow.start(stream.raw()).unwrap();
    iree_hal_hip_rs::hip::host_func::launch(&hip, stream.raw(), wait, |wait| {
        let _ = wait.recv_timeout(Duration::from_secs(10));
    })
    .map_err(|(status, _)| status)
    .unwrap();
    slow.finish(stream.raw()).unwrap();
    slow.issued(2);
    eventually("the first operation completes", || {
        session.flush().unwrap();
        collected.lock().unwrap().batches.iter().flat_map(|batch| &batch.device_spans).count() == 1
    });
    let written: Vec<QueueOpType> = collected.lock().unwrap().batches.iter().flat_map(|batch| &batch.device_spans).map(|span| span.op).collect();
    assert_eq!(written, [QueueOpType::Fill], "only the completed operation is written");
    release.send(()).unwrap();
    // The end waits for the rest.
    session.end().unwrap();
    let written: Vec<QueueOpType> = collected.lock().unwrap().batches.iter().flat_map(|batch| &batch.device_spans).map(|span| span.op).collect();
    assert_eq!(written, [QueueOpType::Fill, QueueOpType::Copy]);
    // Operations after the end record nothing.
    assert!(session.operation(submission("queue_fill")).is_none());
}

#[test]
fn queue_events_alone_record_no_gpu_timing() {
    let hip = hip();
    let gpu = Gpu::retain(&hip, 0).unwrap();
    let stream = gpu.make_current().unwrap().create_stream(hipStreamNonBlocking).unwrap();
    let (session, collected) = session(std::slice::from_ref(&gpu), families::QUEUE_EVENTS);
    let profile = session.operation(submission("queue_update")).unwrap();
    profile.start(stream.raw()).unwrap();
    profile.finish(stream.raw()).unwrap();
    profile.issued(7);
    session.end().unwrap();
    let collected = collected.lock().unwrap();
    let events: Vec<&QueueEventRecord> = collected.batches.iter().flat_map(|batch| &batch.queue_events).collect();
    assert_eq!(events.len(), 1);
    assert_eq!((events[0].op, events[0].submission_id), (QueueOpType::Update, 7));
    assert_eq!(collected.batches.iter().map(|batch| batch.device_spans.len() + batch.clock_samples.len()).sum::<usize>(), 0, "no GPU timing asked for");
}

#[test]
fn a_long_session_samples_the_clock_again_while_work_is_issued() {
    let hip = hip();
    let gpu = Gpu::retain(&hip, 0).unwrap();
    let stream = gpu.make_current().unwrap().create_stream(hipStreamNonBlocking).unwrap();
    // A short interval stands for the default second.
    let options = SessionOptions { sample_interval: Duration::from_millis(100), ..SessionOptions::new(families::DEVICE_QUEUE_EVENTS, Default::default()) };
    let (session, collected) = session_with(std::slice::from_ref(&gpu), options);
    for epoch in 1..=2u64 {
        // Over the sampling interval before each.
        std::thread::sleep(Duration::from_millis(150));
        let profile = session.operation(submission("queue_execute")).unwrap();
        profile.start(stream.raw()).unwrap();
        busy(&hip, &stream, Duration::from_millis(5));
        profile.finish(stream.raw()).unwrap();
        profile.issued(epoch);
    }
    session.end().unwrap();
    let collected = collected.lock().unwrap();
    let samples: Vec<&ClockSample> = collected.batches.iter().flat_map(|batch| &batch.clock_samples).collect();
    // Begin, before each operation (the interval passed), and the end.
    assert!(samples.len() >= 4, "{} samples", samples.len());
    assert!(samples.windows(2).all(|pair| pair[1].device_tick > pair[0].device_tick), "ticks grow: {samples:?}");
    let spans: Vec<&DeviceSpanRecord> = collected.batches.iter().flat_map(|batch| &batch.device_spans).collect();
    assert_eq!(spans.len(), 2);
    // The second operation was measured from the newer anchor, still on the same timeline.
    assert!(spans[1].start_tick >= spans[0].end_tick + 100_000_000, "{spans:?}");
    assert!(spans.iter().all(|span| span.end_tick - span.start_tick >= 5_000_000), "{spans:?}");
}
