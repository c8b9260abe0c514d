"""Audio in and out: decoding, export, atomic writes, metadata, RIFF chunks, PNG,
channel layouts, streamed round trips."""
