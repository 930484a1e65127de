//! One drawing backend type for two outputs.
//!
//! Every chart's drawing code is generic over the plotters backend, so an app that draws on a
//! canvas and also exports SVG compiles all of it twice, once per backend. Drawing both
//! through [`Either`] (`Either::Left(canvas)` on screen, `Either::Right(svg)` for the export,
//! see [`super::render_svg_via`]) compiles it once; each call only picks the side. Every
//! method, the provided ones included, is passed to the side's own implementation, so the
//! output is the side's output, unchanged.

use plotters::prelude::DrawingBackend;
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind,
};
use std::error::Error;
use std::fmt;

/// A drawing backend that is one of two.
pub enum Either<A, B> {
    /// The first backend (the app's canvas).
    Left(A),
    /// The second backend (SVG).
    Right(B),
}

/// The error of the side that failed.
#[derive(Debug)]
pub enum EitherError<A, B> {
    /// From the first backend.
    Left(A),
    /// From the second backend.
    Right(B),
}

impl<A: fmt::Display, B: fmt::Display> fmt::Display for EitherError<A, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EitherError::Left(e) => e.fmt(f),
            EitherError::Right(e) => e.fmt(f),
        }
    }
}

impl<A: Error, B: Error> Error for EitherError<A, B> {}

type Kind<A, B> = DrawingErrorKind<EitherError<A, B>>;

fn left<A: Error + Send + Sync, B: Error + Send + Sync>(e: DrawingErrorKind<A>) -> Kind<A, B> {
    match e {
        DrawingErrorKind::DrawingError(e) => DrawingErrorKind::DrawingError(EitherError::Left(e)),
        DrawingErrorKind::FontError(e) => DrawingErrorKind::FontError(e),
    }
}

fn right<A: Error + Send + Sync, B: Error + Send + Sync>(e: DrawingErrorKind<B>) -> Kind<A, B> {
    match e {
        DrawingErrorKind::DrawingError(e) => DrawingErrorKind::DrawingError(EitherError::Right(e)),
        DrawingErrorKind::FontError(e) => DrawingErrorKind::FontError(e),
    }
}

/// Calls the same method on whichever side `self` is, mapping its error.
macro_rules! each {
    ($self:ident, $b:ident => $call:expr) => {
        match $self {
            Either::Left($b) => $call.map_err(left),
            Either::Right($b) => $call.map_err(right),
        }
    };
}

impl<A: DrawingBackend, B: DrawingBackend> DrawingBackend for Either<A, B> {
    type ErrorType = EitherError<A::ErrorType, B::ErrorType>;

    fn get_size(&self) -> (u32, u32) {
        match self {
            Either::Left(b) => b.get_size(),
            Either::Right(b) => b.get_size(),
        }
    }

    fn ensure_prepared(&mut self) -> Result<(), Kind<A::ErrorType, B::ErrorType>> {
        each!(self, b => b.ensure_prepared())
    }

    fn present(&mut self) -> Result<(), Kind<A::ErrorType, B::ErrorType>> {
        each!(self, b => b.present())
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), Kind<A::ErrorType, B::ErrorType>> {
        each!(self, b => b.draw_pixel(point, color))
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), Kind<A::ErrorType, B::ErrorType>> {
        each!(self, b => b.draw_line(from, to, style))
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), Kind<A::ErrorType, B::ErrorType>> {
        each!(self, b => b.draw_rect(upper_left, bottom_right, style, fill))
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), Kind<A::ErrorType, B::ErrorType>> {
        each!(self, b => b.draw_path(path, style))
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), Kind<A::ErrorType, B::ErrorType>> {
        each!(self, b => b.draw_circle(center, radius, style, fill))
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), Kind<A::ErrorType, B::ErrorType>> {
        each!(self, b => b.fill_polygon(vert, style))
    }

    fn draw_text<TStyle: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Result<(), Kind<A::ErrorType, B::ErrorType>> {
        each!(self, b => b.draw_text(text, style, pos))
    }

    fn estimate_text_size<TStyle: BackendTextStyle>(
        &self,
        text: &str,
        style: &TStyle,
    ) -> Result<(u32, u32), Kind<A::ErrorType, B::ErrorType>> {
        each!(self, b => b.estimate_text_size(text, style))
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), Kind<A::ErrorType, B::ErrorType>> {
        each!(self, b => b.blit_bitmap(pos, size, src))
    }
}
