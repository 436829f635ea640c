pub fn router() -> salvo::Router { salvo::Router::new() }
