package org.apache.cassandra.utils.concurrent;
public class ThreadLocals {
    public static <T> LightweightRecycler<T> createLightweightRecycler(int limit) { return new LightweightRecycler<>(); }
}
