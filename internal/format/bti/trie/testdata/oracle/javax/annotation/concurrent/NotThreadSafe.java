package javax.annotation.concurrent;
public @interface NotThreadSafe {}
