// Package rsync will hold the ResourceSync 1.1 document encoders (urlset and
// sitemapindex streamed over io.Writer, rs:md and rs:ln, W3C datetimes); it is
// written with the ResourceSync server. It imports the standard library only.
package rsync
