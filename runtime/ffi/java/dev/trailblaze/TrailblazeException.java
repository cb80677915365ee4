package dev.trailblaze;

/** An error from trailblaze: {@link #kind} is the C ABI's status name ({@code args}, {@code unknown_tool}, ...). */
public class TrailblazeException extends Exception {
    private static final long serialVersionUID = 1L;

    public final String kind;

    public TrailblazeException(String kind, String message) {
        super(kind + ": " + message);
        this.kind = kind;
    }
}
