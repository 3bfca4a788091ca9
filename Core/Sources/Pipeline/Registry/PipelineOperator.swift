import Reactive

/// An operator, built: a function from the stream it reads to the stream it emits.
public typealias PipelineOperator = (Observable<Value>) -> Observable<Value>
